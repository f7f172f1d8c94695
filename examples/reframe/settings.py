"""A minimal ReFrame configuration for one machine without a scheduler (a laptop, a login
node): `reframe -C examples/reframe/settings.py -c examples/reframe/commbench_checks.py -r`.

One system `local` with one partition `default`: jobs run as local processes (scheduler
`local`) and ReFrame adds no launcher in front of the command (launcher `local`), so the
commbench checks start their ranks themselves (`commbench run -n 2`). The environment
`builtin` is ReFrame's own (it loads nothing; defining it again here only draws a
warning): commbench is whatever is on PATH (or `-S commbench=...`).

Logging is ReFrame's builtin: the performance log of each check lands in
<prefix>/perflogs/local/default/<check>.log (--perflogdir moves it), and --report-file
writes the JSON run report.
"""

site_configuration = {
    "systems": [
        {
            "name": "local",
            "descr": "this machine, no scheduler",
            "hostnames": [".*"],
            "partitions": [
                {
                    "name": "default",
                    "descr": "local processes",
                    "scheduler": "local",
                    "launcher": "local",
                    "environs": ["builtin"],
                    # One benchmark job at a time: two would share the cores and measure
                    # each other.
                    "max_jobs": 1,
                }
            ],
        }
    ],
}
