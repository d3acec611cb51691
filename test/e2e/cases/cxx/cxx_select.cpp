// PIANO_FNS: SkipList,=app::SkipList::Size
// BUILD_ENV: -u PIANO_MIN_SIZE
// Issue 15, items 3 to 6: what "SkipList" selects in C++. A pattern sees a
// function's own qualified name without template arguments: the user
// template app::SkipList<int, app::Less> is selected, but neither the
// std::atomic / std::vector members instantiated with it (system headers, and
// SkipList is only in their template arguments) nor a user template that
// merely holds a SkipList (app::Pool<app::SkipList<...>>). Tiny methods
// (Empty, and at the default PIANO_MIN_SIZE=30 also ~SkipList and
// RandomHeight) are left out of a substring selection unless named
// (=...::Size).
#include <atomic>
#include <cstdio>
#include <vector>

namespace app {
struct Less {
    bool operator()(int a, int b) const { return a < b; }
};

template <class K, class Cmp> class SkipList {
    struct Node {
        K key;
        std::atomic<Node *> next[4];
    };

public:
    SkipList() : head_(NewNode(K(), 4)), n_(0), seed_(0x1234) {}
    ~SkipList() {
        Node *x = head_;
        while (x) {
            Node *nx = x->next[0].load(std::memory_order_acquire);
            delete x;
            x = nx;
        }
    }
    void Insert(const K &key) {
        Node *prev[4];
        Node *x = head_;
        for (int level = 3; level >= 0; level--) {
            Node *nx = x->next[level].load(std::memory_order_acquire);
            while (nx && cmp_(nx->key, key)) {
                x = nx;
                nx = x->next[level].load(std::memory_order_acquire);
            }
            prev[level] = x;
        }
        int h = RandomHeight();
        Node *n = NewNode(key, h);
        for (int i = 0; i < h; i++) {
            n->next[i].store(prev[i]->next[i].load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
            prev[i]->next[i].store(n, std::memory_order_release);
        }
        n_++;
    }
    bool Contains(const K &key) const {
        Node *x = head_;
        for (int level = 3; level >= 0; level--) {
            Node *nx = x->next[level].load(std::memory_order_acquire);
            while (nx && cmp_(nx->key, key)) {
                x = nx;
                nx = x->next[level].load(std::memory_order_acquire);
            }
        }
        Node *nx = x->next[0].load(std::memory_order_acquire);
        return nx && !cmp_(key, nx->key) && !cmp_(nx->key, key);
    }
    int Size() const { return n_; }
    bool Empty() const { return n_ == 0; }

private:
    int RandomHeight() {
        int h = 1;
        for (;;) {
            seed_ = seed_ * 1103515245u + 12345u;
            if (h >= 4 || ((seed_ >> 16) & 3) != 0)
                break;
            h++;
        }
        return h;
    }
    static Node *NewNode(const K &key, int height) {
        Node *n = new Node;
        n->key = key;
        for (int i = 0; i < 4; i++)
            n->next[i].store(nullptr, std::memory_order_relaxed);
        (void)height;
        return n;
    }
    Node *head_;
    int n_;
    unsigned seed_;
    Cmp cmp_;
};

// A user template that holds SkipLists: "SkipList" is only in its template
// arguments, so its members are not selected.
template <class T> struct Pool {
    std::vector<T *> items;
    T *Get(std::size_t i) {
        while (items.size() <= i)
            items.push_back(new T());
        return items[i];
    }
    ~Pool() {
        for (T *t : items)
            delete t;
    }
};
} // namespace app

int main() {
    app::Pool<app::SkipList<int, app::Less>> pool;
    std::atomic<app::SkipList<int, app::Less> *> current(nullptr);
    for (int i = 0; i < 100; i++) {
        app::SkipList<int, app::Less> *s = pool.Get((std::size_t)(i % 2));
        current.store(s);
        current.load()->Insert((i * 37) % 101);
    }
    int found = 0;
    for (int i = 0; i < 101; i++)
        found += pool.Get(0)->Contains(i) + pool.Get(1)->Contains(i);
    std::printf("%d %d %d %d\n", found, pool.Get(0)->Size(), pool.Get(1)->Size(),
                (int)pool.Get(0)->Empty());
    return 0;
}
