/* Prints "module kernel" for every kernel a launcher may request, so tools
 * can check compiled code objects against what the library will ask for. */
#include <stdio.h>

#include "kernel_families.h"

int main(void)
{
    for (int f = 0; f < KP_KF_COUNT; f++) {
        const struct kp_kernel_family *fam = &kp_kernel_families[f];
        for (size_t s = 0; kp_suffix(fam->suffixes, s); s++) {
            char name[KP_KERNEL_NAME_MAX];
            snprintf(name, sizeof(name), fam->pattern, kp_suffix(fam->suffixes, s));
            printf("%s %s\n", kp_builtin_modules[fam->module]->name, name);
        }
    }
    return 0;
}
