/* Every vmhostctl command, once: its name, its function (ctl.h) and what
 * follows the name in its usage line. main.c makes its dispatch table of
 * them and usage.c the usage text, so the usage errors the commands report
 * (ctl_usage_error) need nothing of main.c. */
#ifndef AIRLOCK_VMHOSTCTL_COMMANDS_H
#define AIRLOCK_VMHOSTCTL_COMMANDS_H

#define CTL_EXEC_USAGE                                                                         \
    "ID [--pty] [--stdin] [--env K=V]... [--cwd DIR] [--user U] [--timeout SECONDS] -- CMD " \
    "[ARG]..."

/* X(name, function, usage) for each command, in the order of the usage. */
#define CTL_COMMANDS(X)                                                          \
    X("create", cmd_create, "[--id ID] [--template T] [--cpus N] [--memory MiB]") \
    X("get", cmd_get, "ID")                                                      \
    X("ls", cmd_ls, "")                                                          \
    X("rm", cmd_rm, "ID")                                                        \
    X("pause", cmd_pause, "ID")                                                  \
    X("resume", cmd_resume, "ID")                                                \
    X("suspend", cmd_suspend, "ID")                                              \
    X("exec", cmd_exec, CTL_EXEC_USAGE)                                          \
    X("start", cmd_start, CTL_EXEC_USAGE)                                        \
    X("ps", cmd_ps, "ID")                                                        \
    X("attach", cmd_attach, "ID PID [--follow]")                                 \
    X("kill", cmd_kill, "ID PID [--signal TERM|KILL|N]")                         \
    X("stdin", cmd_stdin, "ID PID < data")                                       \
    X("cat", cmd_cat, "ID PATH")                                                 \
    X("put", cmd_put, "ID PATH [--mode 0644] [--append] [--parents] < data")     \
    X("ls-files", cmd_ls_files, "ID PATH")                                       \
    X("stat", cmd_stat, "ID PATH")                                               \
    X("mkdir", cmd_mkdir, "ID PATH [-p] [--mode 0755]")                          \
    X("rm-file", cmd_rm_file, "ID PATH [-r]")                                    \
    X("mv", cmd_mv, "ID FROM TO")                                                \
    X("chmod", cmd_chmod, "ID MODE PATH")

#endif
