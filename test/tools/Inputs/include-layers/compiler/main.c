#include "front.h"
#include "ir.h"
