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

const char *gw_watch_event_name(Airlock__Guest__V1__WatchEventType t)
{
#define W(x) AIRLOCK__GUEST__V1__WATCH_EVENT_TYPE__WATCH_EVENT_##x
    switch (t) {
    case W(CREATE): return "create";
    case W(WRITE): return "write";
    case W(REMOVE): return "remove";
    case W(RENAME): return "rename";
    case W(CHMOD): return "chmod";
    case W(OVERFLOW): return "overflow";
    default: return "unknown";
    }
#undef W
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
