/* placeholder until the task model lands */
#include "task.h"
