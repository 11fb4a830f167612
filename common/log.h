/* One line per event, key=value (logfmt), to stderr:
 *   ts=2026-11-29T15:52:01.123Z level=info svc=vmhost msg="sandbox created" sandbox=sb_x
 * Callers pass the key=value tail as a printf format. Each string argument
 * becomes one logfmt value, whatever it holds: inside the format's quotes
 * it is escaped (\" \\ \n \r \t \xHH); bare, it is also quoted when
 * it is empty or holds spaces, '=', quotes or control bytes. So a string a
 * guest chose can neither end the line nor forge a field. */
#ifndef AIRLOCK_LOG_H
#define AIRLOCK_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_init(const char *service, enum log_level min_level);
void log_event(enum log_level level, const char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_debug(msg, ...) log_event(LOG_DEBUG, msg, "" __VA_ARGS__)
#define log_info(msg, ...) log_event(LOG_INFO, msg, "" __VA_ARGS__)
#define log_warn(msg, ...) log_event(LOG_WARN, msg, "" __VA_ARGS__)
#define log_error(msg, ...) log_event(LOG_ERROR, msg, "" __VA_ARGS__)

#endif
