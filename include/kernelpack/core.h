/* kernelpack: status codes, errors, logging, version and backend identity. */
#ifndef KERNELPACK_CORE_H
#define KERNELPACK_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the exported API. Everything else in the library is hidden. */
#if defined(KP_BUILDING_LIBRARY) && defined(__GNUC__)
#define KP_API __attribute__((visibility("default")))
#else
#define KP_API
#endif

/* Every fallible call returns one of these. On failure a message with the
 * detail is kept per thread (kp_last_error_message) and nothing was launched
 * or written. */
typedef enum kp_status {
    KP_OK = 0,
    KP_ERR_INVALID_ARGUMENT,  /* a NULL, a bad dtype/layout, sizes that overflow, ... */
    KP_ERR_UNSUPPORTED,       /* a valid request this build or op does not handle */
    KP_ERR_BUFFER_TOO_SMALL,  /* a layout reaches past the end of its buffer */
    KP_ERR_DEVICE_MISMATCH,   /* operands belong to different devices */
    KP_ERR_NO_DRIVER,         /* the vendor driver library could not be loaded */
    KP_ERR_NO_DEVICE,         /* the driver loaded but there is no such device */
    KP_ERR_NO_CODE_FOR_ARCH,  /* no built-in code object runs on the device's arch */
    KP_ERR_OUT_OF_MEMORY,     /* a device or host allocation failed */
    KP_ERR_DRIVER,            /* any other error reported by the vendor runtime */
    KP_ERR_INTERNAL           /* a bug in kernelpack; please report it */
} kp_status;

/* Short constant name of a status ("invalid argument"); never NULL. */
KP_API const char *kp_status_string(kp_status status);

/* The detail message of the last failing kernelpack call on this thread, or
 * "" if none failed yet. Valid until the next kernelpack call on the thread. */
KP_API const char *kp_last_error_message(void);

/* Log levels passed to a log callback. */
typedef enum kp_log_level { KP_LOG_ERROR = 0, KP_LOG_WARNING, KP_LOG_INFO, KP_LOG_DEBUG } kp_log_level;

/* Receives log lines when installed with kp_set_log_callback. May be called
 * from any thread that calls kernelpack. */
typedef void (*kp_log_fn)(void *user, kp_log_level level, const char *message);

/* Installs (or, with NULL, removes) the process-wide log callback; messages
 * above max_level are dropped. kernelpack prints nothing on its own. */
KP_API void kp_set_log_callback(kp_log_fn fn, void *user, kp_log_level max_level);

/* "0.1.0" */
KP_API const char *kp_version(void);

/* The GPU backend this library was built for: "cuda" or "rocm". */
KP_API const char *kp_backend_name(void);

#ifdef __cplusplus
}
#endif
#endif
