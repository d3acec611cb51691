int util_clamp(int x) { return x < 0 ? 0 : x > 100 ? 100 : x; }
int helper_parse(int x) { return x + 1; }   /* "parse" is app's selection, not util's */
