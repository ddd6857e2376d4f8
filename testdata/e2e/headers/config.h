// config.h: passed with -include; defines what scale.h uses.
#define SCALE 3
