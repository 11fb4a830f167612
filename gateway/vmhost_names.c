#include "vmhost_names.h"

#include <signal.h>
#include <string.h>

const char *gw_file_type_name(Airlock__Guest__V1__FileType t)
{
    switch (t) {
    case AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_FILE: return "file";
    case AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_DIR: return "dir";
    case AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_SYMLINK: return "symlink";
    default: return "other";
    }
}

static const struct {
    const char *name;
    int number;
} signal_names[] = {
    { "HUP", SIGHUP },   { "INT", SIGINT },   { "QUIT", SIGQUIT }, { "KILL", SIGKILL },
    { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "TERM", SIGTERM }, { "CONT", SIGCONT },
    { "STOP", SIGSTOP },
};

int gw_signal_number(const char *name)
{
    if (strncmp(name, "SIG", 3) == 0)
        name += 3;
    for (size_t i = 0; i < sizeof(signal_names) / sizeof(*signal_names); i++)
        if (strcmp(signal_names[i].name, name) == 0)
            return signal_names[i].number;
    return 0;
}
