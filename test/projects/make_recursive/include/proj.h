int parse_token(int x);
int util_trim(int x);
int resolve_name(int x);
