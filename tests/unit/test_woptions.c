/* test_woptions.c - worker/woptions.c: gpuworker's settings table, its
 * defaults, the connect address and the device with what each refuses,
 * the bounds of the plain keys, the keys every worker needs, and a
 * configuration file under the command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "conf.h"
#include "conf_fx.h"
#include "gerr.h"
#include "log.h"
#include "unit_main.h"
#include "woptions.h"

static const struct conf_key *key(const char *name)
{
	return fx_key(&worker_options, name);
}

static const char *show(const struct worker_settings *s, const char *name)
{
	return fx_show(&worker_options, s, name);
}

static int online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > WORKER_THREADS_MAX ? WORKER_THREADS_MAX : (int)n;
}

static void test_defaults(void **state)
{
	struct worker_settings s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	memset(&s, 0x5a, sizeof(s));
	woptions_defaults(&s);
	assert_string_equal(s.connect.host, "");
	assert_string_equal(s.token_file, "");
	assert_string_equal(s.device.name, "");
	assert_true(s.checkpoint_interval == 0); /* gpud's */
	assert_int_equal(s.log_level, GLOG_INFO);
	assert_true(s.max_leases == 0);
	assert_int_equal(s.exit_when_idle, 0);
	assert_int_equal(s.no_run_ahead, 0);
	/* Unset keys show as such in --check-config's output. */
	assert_string_equal(show(&s, "connect"), "(unset)");
	assert_string_equal(show(&s, "device"), "(unset)");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	conf_print(&worker_options, &s, f);
	fclose(f);
	assert_string_equal(buf, "connect = (unset)\ntoken-file = \n"
			    "device = (unset)\ninstance = (default)\n"
			    "checkpoint-interval = (gpud's)\n"
			    "log-level = info\nmax-leases = 0\n"
			    "exit-when-idle = no\nno-run-ahead = no\n");
	free(buf);
	assert_string_equal(worker_options.prog, "gpuworker");
	assert_string_equal(worker_options.default_path,
			    "/etc/gpud/gpuworker.conf");
	assert_int_equal(worker_options.n, 9);
	/* gpuworker reloads nothing and has no actions. */
	for (size_t i = 0; i < worker_options.n; i++)
		assert_int_equal(worker_options.keys[i].flags, 0);
}

static void test_connect(void **state)
{
	struct worker_settings s;
	char err[512], host[WORKER_HOST_MAX + 16];
	static const struct {
		const char *in, *host, *port, *out;
	} good[] = {
		{ "gpud.example.org:7700", "gpud.example.org", "7700",
		  "gpud.example.org:7700" },
		{ "127.0.0.1:1", "127.0.0.1", "1", "127.0.0.1:1" },
		{ "[::1]:65535", "::1", "65535", "[::1]:65535" },
		{ "[fe80::1%eth0]:7700", "fe80::1%eth0", "7700",
		  "[fe80::1%eth0]:7700" },
		{ "h:0007", "h", "7", "h:7" },
	};
	static const char refusal[] = "connect wants HOST:PORT ([ADDR]:PORT for "
				      "IPv6, port 1..65535), got '";

	(void)state;
	woptions_defaults(&s);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		fx_shows(&worker_options, &s, "connect", good[i].in,
			 good[i].out);
		assert_string_equal(s.connect.host, good[i].host);
		assert_string_equal(s.connect.port, good[i].port);
	}
	woptions_defaults(&s);
	fx_refused_each(&worker_options, &s, sizeof(s), "connect",
			fx_bad_addresses, FX_BAD_ADDRESSES, refusal);
	/* Port 0 is a listener's "any port", no place to connect to; an IPv6
	 * address wants its brackets. */
	fx_refused(&worker_options, &s, sizeof(s), "connect", "host:0",
		   refusal);
	fx_refused(&worker_options, &s, sizeof(s), "connect", "::1:7700",
		   refusal);
	assert_string_equal(s.connect.host, "");
	/* A host name of WORKER_HOST_MAX bytes fits (DNS's bound), a byte
	 * more does not. */
	memset(host, 'h', WORKER_HOST_MAX);
	snprintf(host + WORKER_HOST_MAX, sizeof(host) - WORKER_HOST_MAX, ":9");
	assert_int_equal(conf_set(key("connect"), &s, host, err, sizeof(err)), 0);
	assert_int_equal(strlen(s.connect.host), WORKER_HOST_MAX);
	memset(host, 'g', WORKER_HOST_MAX + 1);
	snprintf(host + WORKER_HOST_MAX + 1, sizeof(host) - WORKER_HOST_MAX - 1,
		 ":8");
	assert_int_equal(conf_set(key("connect"), &s, host, err, sizeof(err)),
			 GERR_INVAL);
	assert_string_equal(s.connect.port, "9"); /* as it was */
}

static void test_device(void **state)
{
	struct worker_settings s;
	char err[512];
	static const struct {
		const char *in, *name, *out;
		enum wl_device_kind kind;
		int index, threads, given;
	} good[] = {
		{ "cpu:1", "cpu", "cpu:1", WL_DEVICE_CPU, 0, 1, 1 },
		{ "cpu:4096", "cpu", "cpu:4096", WL_DEVICE_CPU, 0, 4096, 1 },
		{ "cpu:08", "cpu", "cpu:8", WL_DEVICE_CPU, 0, 8, 1 },
		{ "cuda:0", "cuda:0", "cuda:0", WL_DEVICE_CUDA, 0, 1, 0 },
		{ "cuda:255", "cuda:255", "cuda:255", WL_DEVICE_CUDA, 255, 1, 0 },
		/* systemd's instance name: gpuworker@cuda3 */
		{ "cuda3", "cuda:3", "cuda:3", WL_DEVICE_CUDA, 3, 1, 0 },
	};
	static const char *const bad[] = {
		"", "gpu", "CPU", "cpu:", "cpu:0", "cpu:4097", "cpu:-1", "cpu:2x",
		"cpu4", "cuda", "cuda:", "cuda:256", "cuda:-1", "cuda:1:2",
		"cuda::1", "cuda: 1", "cpu ",
	};

	(void)state;
	woptions_defaults(&s);
	assert_int_equal(conf_set(key("device"), &s, "cpu", err, sizeof(err)), 0);
	assert_string_equal(s.device.name, "cpu");
	assert_int_equal(s.device.kind, WL_DEVICE_CPU);
	assert_int_equal(s.device.threads, online()); /* every online CPU */
	assert_int_equal(s.device.threads_given, 0);
	assert_string_equal(show(&s, "device"), "cpu");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		woptions_defaults(&s);
		fx_taken(&worker_options, &s, "device", good[i].in);
		assert_string_equal(s.device.name, good[i].name);
		assert_int_equal(s.device.kind, good[i].kind);
		assert_int_equal(s.device.index, good[i].index);
		assert_int_equal(s.device.threads, good[i].threads);
		assert_int_equal(s.device.threads_given, good[i].given);
		assert_string_equal(show(&s, "device"), good[i].out);
	}
	/* A CUDA device after cpu:N forgets the thread count. */
	assert_int_equal(conf_set(key("device"), &s, "cpu:3", err, sizeof(err)), 0);
	assert_int_equal(conf_set(key("device"), &s, "cuda:1", err, sizeof(err)), 0);
	assert_int_equal(s.device.threads_given, 0);
	assert_int_equal(s.device.threads, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (conf_set(key("device"), &s, bad[i], err, sizeof(err)) !=
		    GERR_INVAL)
			fail_msg("'%s' taken", bad[i]);
		if (!bad[i][0])
			assert_string_equal(err, "device wants a value");
		else if (!strstr(err, "device wants cpu, cpu:THREADS (1..4096) or "
				 "cuda:N (0..255), got '"))
			fail_msg("'%s': %s", bad[i], err);
		/* Refused: still cuda:1. */
		assert_string_equal(s.device.name, "cuda:1");
		assert_int_equal(s.device.index, 1);
	}
}

static void test_plain_keys(void **state)
{
	struct worker_settings s;
	char err[512], *path;
	static const struct {
		const char *key, *val, *msg;
	} bad[] = {
		{ "checkpoint-interval", "0.05",
		  "checkpoint-interval wants SECONDS in 0.1..86400, got '0.05'" },
		{ "checkpoint-interval", "86401", "in 0.1..86400" },
		{ "max-leases", "1000000001",
		  "max-leases wants an integer in 0..1000000000" },
		{ "max-leases", "-1", "an integer" },
		{ "log-level", "verbose", "log-level wants error, warn, info or debug" },
		{ "exit-when-idle", "sometimes", "exit-when-idle wants yes or no" },
		{ "token-file", "/etc/a\tb", "token-file wants FILE of at most" },
		{ "instance", "node 7", "instance wants 1..64 characters" },
		{ "instance", "", "instance wants a value" },
		{ "instance", "01234567890123456789012345678901234567890123456789"
		  "012345678901234", "1..64 characters" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		woptions_defaults(&s);
		fx_refused(&worker_options, &s, sizeof(s), bad[i].key,
			   bad[i].val, bad[i].msg);
	}
	woptions_defaults(&s);
	assert_int_equal(conf_set(key("checkpoint-interval"), &s, "0.1", err,
				  sizeof(err)), 0);
	assert_int_equal(conf_set(key("max-leases"), &s, "1000000000", err,
				  sizeof(err)), 0);
	assert_int_equal(conf_set(key("no-run-ahead"), &s, "yes", err,
				  sizeof(err)), 0);
	assert_true(s.checkpoint_interval == 0.1 && s.max_leases == 1000000000);
	assert_int_equal(s.no_run_ahead, 1);
	assert_int_equal(conf_set(key("instance"), &s, "node7/slurm12_3/cuda:0",
				  err, sizeof(err)), 0);
	assert_string_equal(s.instance, "node7/slurm12_3/cuda:0");
	/* token-file holds up to PATH_MAX - 1 bytes. */
	path = malloc(PATH_MAX + 1);
	assert_non_null(path);
	memset(path, 't', PATH_MAX);
	path[PATH_MAX] = '\0';
	assert_int_equal(conf_set(key("token-file"), &s, path, err, sizeof(err)),
			 GERR_INVAL);
	path[PATH_MAX - 1] = '\0';
	assert_int_equal(conf_set(key("token-file"), &s, path, err, sizeof(err)), 0);
	assert_int_equal(strlen(s.token_file), PATH_MAX - 1);
	free(path);
}

static void test_finish(void **state)
{
	struct worker_settings s;
	char err[256];

	(void)state;
	woptions_defaults(&s);
	assert_int_equal(woptions_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "--connect HOST:PORT is required (an option or a "
			    "key of the configuration file)");
	assert_int_equal(conf_set(key("connect"), &s, "h:1", err, sizeof(err)), 0);
	assert_int_equal(woptions_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "--token-file FILE is required (an option or a "
			    "key of the configuration file)");
	assert_int_equal(conf_set(key("token-file"), &s, "/etc/gpud/w.token", err,
				  sizeof(err)), 0);
	assert_int_equal(woptions_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "--device DEVICE is required (an option or a "
			    "key of the configuration file)");
	assert_int_equal(conf_set(key("device"), &s, "cuda0", err, sizeof(err)), 0);
	memset(err, 'z', sizeof(err));
	assert_int_equal(woptions_finish(&s, err, sizeof(err)), 0);
	assert_int_equal(err[0], 'z'); /* nothing written on success */
	/* Only the first missing key is named: connect before device. */
	woptions_defaults(&s);
	assert_int_equal(conf_set(key("token-file"), &s, "/t", err, sizeof(err)), 0);
	assert_int_equal(woptions_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "--connect"));
	assert_null(strstr(err, "--device"));
}

static void test_file_and_args(void **state)
{
	struct worker_settings def, cli, out;
	struct conf_args args;
	char path[64], err[512], cfg[96];
	const char *text = "# gpuworker@cuda0\nconnect = [::1]:7700\n"
			   "token-file = /etc/gpud/w0.token\ndevice = cuda0\n"
			   "max-leases = 3\nexit-when-idle = yes\n";
	FILE *f;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_woptions.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(cfg, sizeof(cfg), "--config=%s", path);
	char *argv[] = { "gpuworker", cfg, "--device", "cpu:2", "--no-run-ahead",
			 "--log-level", "warn", NULL };
	woptions_defaults(&def);
	cli = def;
	assert_int_equal(conf_parse_args(&worker_options, 7, argv, &cli, &args,
					 err, sizeof(err)), 0);
	assert_int_equal(conf_load(&worker_options, &args, &def, &cli, &out,
				   sizeof(out), err, sizeof(err)), 1);
	assert_int_equal(woptions_finish(&out, err, sizeof(err)), 0);
	assert_string_equal(out.connect.host, "::1");
	assert_string_equal(out.connect.port, "7700");
	assert_string_equal(out.token_file, "/etc/gpud/w0.token");
	/* The command line's device over the file's. */
	assert_int_equal(out.device.kind, WL_DEVICE_CPU);
	assert_int_equal(out.device.threads, 2);
	assert_true(out.max_leases == 3 && out.exit_when_idle == 1);
	assert_int_equal(out.no_run_ahead, 1);
	assert_int_equal(out.log_level, GLOG_WARN);
	assert_true(out.checkpoint_interval == 0);
	/* A bad device in the file names its line. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("connect = h:1\ndevice = cuda:999\n", f);
	fclose(f);
	assert_int_equal(conf_load_file(&worker_options, path, &out, err,
					sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, ":2: device wants cpu, cpu:THREADS"));
	assert_non_null(strstr(err, "got 'cuda:999'"));
	unlink(path);
	/* And on the command line, the option's name. */
	char *argv2[] = { "gpuworker", "--connect", "nohost", NULL };
	cli = def;
	assert_int_equal(conf_parse_args(&worker_options, 3, argv2, &cli, &args,
					 err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "--connect wants HOST:PORT"));
}

UNIT_MAIN(cmocka_unit_test(test_defaults),
	cmocka_unit_test(test_connect),
	cmocka_unit_test(test_device),
	cmocka_unit_test(test_plain_keys),
	cmocka_unit_test(test_finish),
	cmocka_unit_test(test_file_and_args))
