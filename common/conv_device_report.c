/* conv_device_report: one line about the GPU the GPU tests use, printed by
 * ctest after every run (CTestCustom.cmake): its name and the code it runs,
 * or why there is none and the GPU tests skip. Always exits 0. */
#include <stdio.h>

#include "conv_device.h"

int main(void)
{
    conv_device_info info;
    conv_msg msg = {{0}};
    if (conv_cuda_device_info(conv_current_device(), &info, &msg) != CONV_OK) {
        printf("GPU tests skip on this machine: %s\n", msg.text);
        return 0;
    }
    char code[96];
    conv_format_code(&info, code, sizeof code);
    printf("GPU tests use %s (sm_%d%d, %s; built for %s)\n", info.name, info.cc_major,
           info.cc_minor, code, conv_built_archs());
    return 0;
}
