/*
 * The version of cutegen, shared by the commands (`cutegen version`) and the modules that name
 * it to the outside (the HTTP User-Agent). Not for: anything else.
 */
#ifndef CUTEGEN_VERSION_H
#define CUTEGEN_VERSION_H

#define CUTEGEN_VERSION "0.1.0"

#endif
