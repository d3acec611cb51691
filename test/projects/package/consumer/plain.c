int plain_parse(int x) { return x * 2; }        /* contains "parse" but its target is not instrumented */
