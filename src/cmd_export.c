#include "cutegen.h"
int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("export: not built yet");
	return EXIT_INTERNAL;
}
