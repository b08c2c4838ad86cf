/* input of test/source/include-layers.test */
#include <stdio.h>
