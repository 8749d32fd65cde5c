/* Maps host memory through the AML C API of a zehal built as a subproject. */
#include <aml.h>
#include <aml/area/ze.h>
#include <string.h>

int main(void) {
    if (aml_init(NULL, NULL) != AML_SUCCESS) return 1;
    struct aml_area* area = NULL;
    if (aml_area_ze_host_create(&area, 0, 64) != AML_SUCCESS) return 2;
    char* p = aml_area_mmap(area, 4096, NULL);
    if (!p) return 3;
    memset(p, 7, 4096);
    if (aml_area_munmap(area, p, 4096) != AML_SUCCESS) return 4;
    aml_area_ze_destroy(&area);
    return aml_finalize() == AML_SUCCESS ? 0 : 5;
}
