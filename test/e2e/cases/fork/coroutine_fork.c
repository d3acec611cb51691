// PIANO_FNS: =main,resume,gen,co_fork,child_work,parent_wait,co_thread,thread_work,thread_gen,thread_leaf,spin
// CFLAGS: -pthread
// fork and pthread_create from inside a coroutine (swapcontext), while the
// calls of main's context are parked: the child resumes main's context, whose
// parked calls come back and end in the child; the new thread records its
// own calls, outermost, none of the coroutine's nor main's under them; a
// coroutine it leaves suspended ends with it.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
static ucontext_t main_ctx, co;
static volatile int sink;
#include "../lib/spin.h"
static int is_child;
void thread_leaf(void) { sink++; }
static ucontext_t thread_main, thread_co;
void thread_gen(void) {
    thread_leaf();
    swapcontext(&thread_co, &thread_main);   /* never resumed: ends with the thread */
}
void *thread_work(void *arg) {
    thread_leaf();
    spin(100);
    getcontext(&thread_co);
    thread_co.uc_stack.ss_sp = malloc(64 << 10);
    thread_co.uc_stack.ss_size = 64 << 10;
    makecontext(&thread_co, thread_gen, 0);
    swapcontext(&thread_main, &thread_co);
    thread_leaf();
    return arg;
}
void co_thread(void) {
    pthread_t t;
    pthread_create(&t, NULL, thread_work, NULL);
    pthread_join(t, NULL);
}
void child_work(void) { spin(5); }
void parent_wait(pid_t pid) { waitpid(pid, NULL, 0); }
void co_fork(void) {
    pid_t pid = fork();
    if (pid == 0) {
        is_child = 1;
        child_work();
    } else {
        parent_wait(pid);
    }
}
void gen(void) {
    co_thread();
    swapcontext(&co, &main_ctx);
    co_fork();
    swapcontext(&co, &main_ctx);   /* both processes go on from here */
}
void resume(void) { swapcontext(&main_ctx, &co); }
int main(void) {
    getcontext(&co);
    co.uc_stack.ss_sp = malloc(256 << 10);
    co.uc_stack.ss_size = 256 << 10;
    co.uc_link = &main_ctx;
    makecontext(&co, gen, 0);
    resume();   /* gen starts a thread */
    resume();   /* gen forks */
    resume();   /* gen returns */
    printf("%s\n", is_child ? "child" : "parent");
    return 0;
}
