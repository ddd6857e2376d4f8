// Plain C++ (no device code): prints the example's results.
#pragma once

int report(const char *what, double got, double want);
