/* placeholder until the task model lands */
#include "cutegen.h"
int cmd_tasks(int argc, char **argv) { (void)argc; (void)argv; error("not built yet"); return EXIT_INTERNAL; }
int cmd_task(int argc, char **argv) { (void)argc; (void)argv; error("not built yet"); return EXIT_INTERNAL; }
