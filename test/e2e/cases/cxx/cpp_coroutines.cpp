// PIANO_FNS: counter,square,leaf,parent,failing,bad_gen,consume,drive,=main
// CFLAGS: -std=c++20 -pthread
// C++20 coroutines: CoroSplit makes each selected coroutine a ramp (the call
// that creates it), `.resume` (each resumption), `.destroy`/`.cleanup` (its
// frame destroyed); each piece is a call of its own, at -O0 and after the
// optimizer has inlined the pieces into their callers (-O2 elides these
// generators' frames). A generator (resumed on two threads), tasks awaiting
// tasks by symmetric transfer, an exception kept in the promise and one
// rethrown out of resume(), a generator destroyed while suspended.
#include <coroutine>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <thread>
#include <utility>

struct Gen {
    struct promise_type {
        int value = 0;
        bool rethrow = false;
        Gen get_return_object() { return Gen{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_always final_suspend() noexcept { return {}; }
        std::suspend_always yield_value(int v) noexcept
        {
            value = v;
            return {};
        }
        void return_void() noexcept {}
        void unhandled_exception() { throw; }   // out of resume(), to the resumer
    };
    std::coroutine_handle<promise_type> h;
    explicit Gen(std::coroutine_handle<promise_type> h) : h(h) {}
    Gen(Gen &&o) noexcept : h(std::exchange(o.h, nullptr)) {}
    ~Gen()
    {
        if (h)
            h.destroy();
    }
    bool next()
    {
        h.resume();
        return !h.done();
    }
    int value() const { return h.promise().value; }
};

__attribute__((noinline)) int square(int x)
{
    return x * x;
}

Gen counter(int n)
{
    for (int i = 0; i < n; i++)
        co_yield square(i);
}

Gen bad_gen()
{
    co_yield 1;
    throw std::runtime_error("bad");
}

template <typename T> struct Task {
    struct promise_type {
        T value{};
        std::exception_ptr error;
        std::coroutine_handle<> continuation = std::noop_coroutine();
        Task get_return_object() { return Task{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct Final {
            bool await_ready() noexcept { return false; }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept
            {
                return h.promise().continuation;   // symmetric transfer to the awaiter
            }
            void await_resume() noexcept {}
        };
        Final final_suspend() noexcept { return {}; }
        void return_value(T v) { value = v; }
        void unhandled_exception() { error = std::current_exception(); }
    };
    std::coroutine_handle<promise_type> h;
    explicit Task(std::coroutine_handle<promise_type> h) : h(h) {}
    Task(Task &&o) noexcept : h(std::exchange(o.h, nullptr)) {}
    ~Task()
    {
        if (h)
            h.destroy();
    }
    bool await_ready() { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiter)
    {
        h.promise().continuation = awaiter;
        return h;   // symmetric transfer into this task
    }
    T await_resume()
    {
        if (h.promise().error)
            std::rethrow_exception(h.promise().error);
        return h.promise().value;
    }
};

Task<int> leaf(int x)
{
    co_return 2 * x;
}

Task<int> failing(int x)
{
    if (x >= 0)
        throw std::runtime_error("failing");
    co_return x;
}

Task<int> parent(int x)
{
    int a = co_await leaf(x);
    int b = co_await leaf(x + 1);
    int c = 0;
    try {
        c = co_await failing(x);
    } catch (const std::exception &) {
        c = 1;
    }
    co_return a + b + c;
}

__attribute__((noinline)) long consume(Gen &g, int most)
{
    long s = 0;
    for (int k = 0; k < most && g.next(); k++)
        s += g.value();
    return s;
}

__attribute__((noinline)) int drive(int x)
{
    Task<int> t = parent(x);
    t.h.resume();   // runs to the end: every await completes by symmetric transfer
    return t.h.promise().value;
}

int main()
{
    long total = 0;
    for (int r = 0; r < 10; r++) {   // 10 generators of 5 values, read to the end
        Gen g = counter(5);
        total += consume(g, 100);
    }
    for (int r = 0; r < 4; r++) {   // 4 of 10 values, 2 read here and the rest on a thread
        Gen g = counter(10);
        total += consume(g, 2);
        std::thread t([&g, &total] { total += consume(g, 100); });
        t.join();
    }
    for (int r = 0; r < 3; r++) {   // 3 of 10 values, abandoned after 2: destroyed suspended
        Gen g = counter(10);
        total += consume(g, 2);
    }
    for (int r = 0; r < 6; r++)
        total += drive(r);
    int caught = 0;
    for (int r = 0; r < 2; r++) {
        Gen g = bad_gen();
        try {
            while (g.next())
                total += g.value();
        } catch (const std::runtime_error &) {
            caught++;
        }
    }
    printf("%ld %d\n", total, caught);
    return 0;
}
