#include "base.h"
#include "front.h" /* breaks the order */
