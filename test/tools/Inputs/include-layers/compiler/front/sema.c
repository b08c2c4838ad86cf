#include "front.h"
#include "sema.h"
