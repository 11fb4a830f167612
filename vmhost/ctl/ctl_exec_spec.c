#include "ctl_exec_spec.h"

#include "args.h"
#include "ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_env(struct exec_spec *spec, char *assignment)
{
    char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return -1;
    *eq = '\0';
    Airlock__Vmhost__V1__ExecRequest__EnvEntry *e = &spec->env[spec->req.n_env];
    airlock__vmhost__v1__exec_request__env_entry__init(e);
    e->key = assignment;
    e->value = eq + 1;
    spec->env_ptrs[spec->req.n_env++] = e;
    return 0;
}

static int invalid_value(struct exec_spec *spec, const char *command, const char *option,
                         const char *value)
{
    ctl_exec_spec_free(spec);
    return ctl_usage_error(command, "invalid %s '%s'", option, value);
}

int ctl_exec_spec_parse(struct exec_spec *spec, int argc, char **argv)
{
    static const struct option options[] = {
        {"pty", no_argument, NULL, 'p'},
        {"stdin", no_argument, NULL, 'i'},
        {"env", required_argument, NULL, 'e'},
        {"cwd", required_argument, NULL, 'd'},
        {"user", required_argument, NULL, 'u'},
        {"timeout", required_argument, NULL, 't'},
        {0},
    };
    memset(spec, 0, sizeof(*spec));
    airlock__vmhost__v1__exec_request__init(&spec->req);
    /* argc bounds both the --env count and the command's length. */
    spec->argv = calloc((size_t)argc, sizeof(*spec->argv));
    spec->env = calloc((size_t)argc, sizeof(*spec->env));
    spec->env_ptrs = calloc((size_t)argc, sizeof(*spec->env_ptrs));
    if (!spec->argv || !spec->env || !spec->env_ptrs) {
        ctl_exec_spec_free(spec);
        fprintf(stderr, "vmhostctl: out of memory\n");
        return CTL_EXIT_ERROR;
    }
    spec->req.env = spec->env_ptrs;
    spec->req.argv = spec->argv;

    unsigned long secs;
    int opt;
    while ((opt = ctl_next_option(argc, argv, ":", options)) != -1) {
        switch (opt) {
        case 'p':
            spec->req.pty = true;
            break;
        case 'i':
            spec->stdin_requested = true;
            break;
        case 'e':
            if (add_env(spec, optarg) < 0)
                return invalid_value(spec, argv[0], "--env", optarg);
            break;
        case 'd':
            spec->req.cwd = (ProtobufCBinaryData){.len = strlen(optarg), .data = (uint8_t *)optarg};
            break;
        case 'u':
            spec->req.user = optarg;
            break;
        case 't':
            if (ctl_parse_uint(optarg, UINT32_MAX / 1000, &secs) < 0 || secs == 0)
                return invalid_value(spec, argv[0], "--timeout", optarg);
            spec->req.timeout_ms = (uint32_t)(secs * 1000);
            break;
        default:
            ctl_exec_spec_free(spec);
            return CTL_EXIT_USAGE;
        }
    }
    if (argc - optind < 2) {
        ctl_exec_spec_free(spec);
        return ctl_usage_error(argv[0], "expected a sandbox ID and a command");
    }
    spec->req.sandbox_id = argv[optind++];
    for (; optind < argc; optind++)
        spec->argv[spec->req.n_argv++] =
            (ProtobufCBinaryData){.len = strlen(argv[optind]), .data = (uint8_t *)argv[optind]};
    return 0;
}

void ctl_exec_spec_free(struct exec_spec *spec)
{
    free(spec->argv);
    free(spec->env);
    free(spec->env_ptrs);
    spec->argv = NULL;
    spec->env = NULL;
    spec->env_ptrs = NULL;
}
