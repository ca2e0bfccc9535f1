/* Public introspection of the built-in modules. */
#include "internal.h"

const char *kp_code_format_name(kp_code_format format)
{
    switch (format) {
    case KP_CODE_FATBIN: return "fatbin";
    case KP_CODE_PTX: return "ptx";
    case KP_CODE_HSACO_BUNDLE: return "hsaco-bundle";
    }
    return NULL;
}

size_t kp_module_count(void)
{
    return KP_MODULE_COUNT;
}

kp_status kp_module_get_info(size_t index, kp_module_info *info)
{
    KP_CHECK_NOT_NULL(info);
    if (index >= KP_MODULE_COUNT)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_module_get_info: index %zu >= %d", index, KP_MODULE_COUNT);
    const struct kp_module_desc *d = kp_builtin_modules[index];
    *info = (kp_module_info){d->name, d->kernel_count, d->object_count};
    return KP_OK;
}

kp_status kp_module_get_code_object(size_t index, size_t object, kp_code_object_info *info)
{
    KP_CHECK_NOT_NULL(info);
    if (index >= KP_MODULE_COUNT || object >= kp_builtin_modules[index]->object_count)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_module_get_code_object: no code object %zu of module %zu",
                       object, index);
    const struct kp_code_object *o = &kp_builtin_modules[index]->objects[object];
    *info = (kp_code_object_info){o->format, o->archs, o->size};
    return KP_OK;
}

const char *kp_module_kernel_name(size_t index, size_t kernel)
{
    if (index >= KP_MODULE_COUNT || kernel >= kp_builtin_modules[index]->kernel_count)
        return NULL;
    return kp_builtin_modules[index]->kernels[kernel].name;
}

size_t kp_module_resource_count(size_t index)
{
    return index < KP_MODULE_COUNT ? kp_builtin_modules[index]->resource_count : 0;
}

kp_status kp_module_get_resources(size_t index, size_t row, kp_kernel_resources *out)
{
    KP_CHECK_NOT_NULL(out);
    if (index >= KP_MODULE_COUNT || row >= kp_builtin_modules[index]->resource_count)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_module_get_resources: no row %zu in module %zu",
                       row, index);
    *out = kp_builtin_modules[index]->resources[row];
    return KP_OK;
}
