#include "config.h"
int lex_next(const char *s, int *pos);
int lex_skip_space(const char *s, int pos);
long eval_expr(const char *s);
