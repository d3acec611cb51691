
namespace app {
class Resolver {
public:
    int resolve(const char *name);
private:
    int hash(const char *name);
};
}
