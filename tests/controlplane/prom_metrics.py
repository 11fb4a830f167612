"""The Prometheus /metrics of the stack's services (standard library
only): cp_harness exports each one's 127.0.0.1:port as
AIRLOCK_TEST_<SERVICE>_METRICS. Samples are read back as numbers by name
and labels."""
import os
import re
import urllib.request

SERVICES = ("vmhost", "scheduler", "egress", "vault")
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def scrape(service):
    """(content type, text, {(name, ((label, value), ...)): number}) of a
    service's /metrics."""
    addr = os.environ["AIRLOCK_TEST_%s_METRICS" % service.upper()]
    with urllib.request.urlopen("http://%s/metrics" % addr, timeout=60) as resp:
        ctype, text = resp.headers.get("Content-Type", ""), resp.read().decode()
    samples = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m and not line.startswith("#"):
            labels = tuple(sorted((k, v.replace('\\"', '"').replace("\\n", "\n")
                                   .replace("\\\\", "\\"))
                                  for k, v in LABEL.findall(m.group(2) or "")))
            samples[(m.group(1), labels)] = float(m.group(3))
    return ctype, text, samples


def scrape_all():
    """{service: samples} of every service."""
    return {s: scrape(s)[2] for s in SERVICES}


def value(samples, name, **labels):
    """The sum of name's samples whose labels include these."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))
