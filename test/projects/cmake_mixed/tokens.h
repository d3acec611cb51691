#ifdef __cplusplus
extern "C" {
#endif
int tok_count(const char *s);
int tok_is_sep(char c);
#ifdef __cplusplus
}
#endif
