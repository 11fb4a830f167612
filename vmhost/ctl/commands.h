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
#define CTL_COMMANDS(X)                                                                   \
    X("create", ctl_cmd_create, "[--id ID] [--template T] [--cpus N] [--memory MiB]")     \
    X("get", ctl_cmd_get, "ID")                                                           \
    X("ls", ctl_cmd_ls, "")                                                               \
    X("rm", ctl_cmd_rm, "ID")                                                             \
    X("pause", ctl_cmd_pause, "ID")                                                       \
    X("resume", ctl_cmd_resume, "ID")                                                     \
    X("suspend", ctl_cmd_suspend, "ID")                                                   \
    X("exec", ctl_cmd_exec, CTL_EXEC_USAGE)                                               \
    X("start", ctl_cmd_start, CTL_EXEC_USAGE)                                             \
    X("ps", ctl_cmd_ps, "ID")                                                             \
    X("attach", ctl_cmd_attach, "ID PID [--follow]")                                      \
    X("kill", ctl_cmd_kill, "ID PID [--signal TERM|KILL|N]")                              \
    X("stdin", ctl_cmd_stdin, "ID PID < data")                                            \
    X("cat", ctl_cmd_cat, "ID PATH")                                                      \
    X("put", ctl_cmd_put, "ID PATH [--mode 0644] [--append] [--parents] < data")          \
    X("ls-files", ctl_cmd_ls_files, "ID PATH")                                            \
    X("stat", ctl_cmd_stat, "ID PATH")                                                    \
    X("mkdir", ctl_cmd_mkdir, "ID PATH [-p] [--mode 0755]")                               \
    X("rm-file", ctl_cmd_rm_file, "ID PATH [-r]")                                         \
    X("mv", ctl_cmd_mv, "ID FROM TO")                                                     \
    X("chmod", ctl_cmd_chmod, "ID MODE PATH")

#endif
