#include "front.h"
