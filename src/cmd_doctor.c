/* placeholder */
#include "cutegen.h"
int cmd_doctor(int argc, char **argv) { (void)argc; (void)argv; error("not built yet"); return EXIT_INTERNAL; }
