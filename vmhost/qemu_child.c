#include "qemu_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

int qemu_child_begin(int nice)
{
    setsid();
    if (nice > 0 && setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + nice) < 0)
        return -1;
    /* No transparent huge pages: QEMU madvises TCG's code buffer for them,
     * so the translated code of an idle guest grew in 2 MiB steps (4 MiB
     * more per idle sandbox, code and heap; no slower create or exec
     * measured: docs/snapshots.md). Not part of any snapshot. */
    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
    return 0;
}

int qemu_child_stdio(int log_fd)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    return devnull < 0 || dup2(devnull, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0
               ? -1
               : 0;
}
