/* One-time initialisation of the built backend (loads the vendor driver). */
#include <stdio.h>

#include "internal.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static kp_status init_status;
static char init_message[512];
static const struct kp_backend *override;
static pthread_mutex_t override_lock = PTHREAD_MUTEX_INITIALIZER;

static void init_builtin(void)
{
    init_status = kp_backend_builtin.init();
    if (init_status != KP_OK)
        snprintf(init_message, sizeof(init_message), "%s", kp_last_error_message());
}

const char *kp_backend_name(void)
{
    return kp_backend_builtin.name;
}

const struct kp_backend *kp_backend_get(kp_status *status)
{
    pthread_mutex_lock(&override_lock);
    const struct kp_backend *be = override;
    pthread_mutex_unlock(&override_lock);
    if (be) {
        *status = KP_OK;
        return be;
    }
    pthread_once(&init_once, init_builtin);
    *status = init_status;
    if (init_status != KP_OK) {
        kp_fail(init_status, "%s", init_message);
        return NULL;
    }
    return &kp_backend_builtin;
}

void kp_backend_override(const struct kp_backend *backend)
{
    pthread_mutex_lock(&override_lock);
    override = backend;
    pthread_mutex_unlock(&override_lock);
}
