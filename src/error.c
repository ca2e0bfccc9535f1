/* Per-thread error messages and the optional log callback. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[512];

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static kp_log_fn log_fn;
static void *log_user;
static kp_log_level log_max = KP_LOG_ERROR;

static const char *const status_names[] = {
    [KP_OK] = "ok",
    [KP_ERR_INVALID_ARGUMENT] = "invalid argument",
    [KP_ERR_UNSUPPORTED] = "unsupported",
    [KP_ERR_BUFFER_TOO_SMALL] = "buffer too small",
    [KP_ERR_DEVICE_MISMATCH] = "device mismatch",
    [KP_ERR_NO_DRIVER] = "no driver",
    [KP_ERR_NO_DEVICE] = "no device",
    [KP_ERR_NO_CODE_FOR_ARCH] = "no code for device arch",
    [KP_ERR_OUT_OF_MEMORY] = "out of memory",
    [KP_ERR_DRIVER] = "driver error",
    [KP_ERR_INTERNAL] = "internal error",
};

const char *kp_status_string(kp_status status)
{
    if ((unsigned)status < sizeof(status_names) / sizeof(status_names[0]) && status_names[status])
        return status_names[status];
    return "unknown status";
}

const char *kp_last_error_message(void)
{
    return last_error;
}

void kp_set_log_callback(kp_log_fn fn, void *user, kp_log_level max_level)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_user = user;
    log_max = max_level;
    pthread_mutex_unlock(&log_lock);
}

static void vlog(kp_log_level level, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&log_lock);
    kp_log_fn fn = log_fn;
    void *user = log_user;
    bool wanted = fn && level <= log_max;
    pthread_mutex_unlock(&log_lock);
    if (!wanted)
        return;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fn(user, level, msg);
}

void kp_log(kp_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

kp_status kp_fail(kp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    kp_log(KP_LOG_ERROR, "%s (%s)", last_error, kp_status_string(status));
    return status;
}

const char *kp_version(void)
{
    return KP_VERSION;
}
