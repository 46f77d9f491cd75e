/* A stand-in libnvidia-ml.so.1 for `gpuprep watch`'s tests: the NVML entry points watch calls, with the
 * structures, field ids, metric ids and return codes of NVIDIA's nvml.h (public copy: github.com/NVIDIA/
 * go-nvml gen/nvml/nvml.h), answering from a synthetic trace file (tests/watch/traces/, format in
 * tests/watch/README.md) named by GPUPREP_STANDIN_TRACE. Not NVIDIA code, and not gpuprep's: it declares
 * its own structures from the header so the two sides can disagree the way a real driver and a program can.
 *
 * Counters are integrals over real time: each step of the trace holds rates (power, bytes/s, throttle
 * shares, GPM percentages) for step_ms and the library integrates them between calls, so cumulative
 * counters grow (and wrap, when a trace starts them near 2^64) however late the caller asks. Utilisation
 * samples are produced every sample_ms into a ring buffer and returned by lastSeen, NOT_FOUND when none is
 * newer. The mess: per-field NOT_SUPPORTED, GPM NOT_SUPPORTED before Hopper, GPU_IS_LOST from a given
 * time, the R535 32-byte process entries, a process list that grows between the sizing answer and the
 * fetch, and a call that sleeps past the caller's deadline. Built twice: the default, and -DSTANDIN_LEGACY
 * without nvmlDeviceGetCurrentClocksEventReasons (added in the R535 headers), as older drivers are. */
#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};

typedef union {
  double dVal;
  int siVal;
  unsigned uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
} nvmlValue_t;
typedef struct {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
} nvmlSample_t;
typedef struct {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct {
  unsigned metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char *shortName, *longName, *unit;
  } metricInfo;
} nvmlGpmMetric_t;
typedef struct standin_gpm_sample* nvmlGpmSample_t;
/* nvmlGpmMetricsGet_t with the 98-entry metrics[] of the 11.8-12.8 headers: by default this stand-in plays
 * a driver built against those, so it writes nothing past numMetrics and refuses numMetrics > 98. With
 * `gpm_layout 333` in the trace it plays one built against the 13.2+ headers (NVML_GPM_METRIC_MAX 333, the
 * version still 1): it reads the caller's struct at that size, so a smaller buffer overruns, and refuses
 * entries past numMetrics that are not zero (a caller that did not zero the struct). */
typedef struct {
  unsigned version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[98];
} nvmlGpmMetricsGet_t;
typedef struct {
  unsigned version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[333];
} nvmlGpmMetricsGet333_t;
typedef struct {
  unsigned version, isSupportedDevice;
} nvmlGpmSupport_t;

_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t");
_Static_assert(sizeof(nvmlSample_t) == 16, "nvmlSample_t");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t");

#define MAX_GPUS 16
#define MAX_STEPS 64
#define MAX_PROCS 32
#define MAX_DUTY 32
#define MAX_GI 8
#define RING 120
#define MAX_EVENTS 32

enum { R_PCIE_TX, R_PCIE_RX, R_NVL_TX, R_NVL_RX, N_RATES };               /* bytes/s */
enum { T_POWERCAP, T_SYNCBOOST, T_SWTHERM, T_HWTHERM, T_BRAKE, N_TIMES }; /* share of time, 0-1 */
enum { G_SM, G_OCC, G_TENSOR, G_DRAM, N_GPM };                            /* percent */

struct proc {
  unsigned pid;
  double mem_mib;
  int gi;
};
struct dyn {
  int duty[MAX_DUTY], nduty, duty_none;
  double mem_used_mib, power_w, power_limit_w, rates[N_RATES], times[N_TIMES], gpm[N_GPM];
  unsigned sm_mhz;
  double temp_c; /* the GPU die; answered only once a step gives temp_c (else NOT_SUPPORTED) */
  int has_temp;
  unsigned long long reasons;
  struct proc procs[MAX_PROCS];
  int nprocs;
  double mig_gpm[MAX_GI][N_GPM];
};
struct gpu {
  char name[96], uuid[96];
  unsigned arch, bus, sm_max_mhz, nvlink_links, nvlink_active, nvlink_mbps, pcie_gen, pcie_width, gpm, mig,
      ngi, gi[MAX_GI];
  double memory_mib, power_default_w;
  int unsupported_fields[32], nunsupported_fields;
  char unsupported_calls[8][64];
  int nunsupported_calls;
  /* state */
  pthread_mutex_t mu;
  double last_s;
  double energy_mj;
  unsigned long long counters[N_RATES]; /* PCIe bytes, NVLink KiB */
  double counter_frac[N_RATES];
  double ns[N_TIMES];
  double gpm_int[1 + MAX_GI][N_GPM + 4]; /* [0] whole GPU, [1+k] instance k; + the 4 rates in MiB */
  nvmlSample_t ring[RING];
  int ring_len, ring_head;
  long long next_slot;
  double lost_at_ms;
  /* health (doctor): static per GPU */
  unsigned pstate, reset_required, remap_corr, remap_unc, remap_pending, remap_failure, retire_pending,
      retired_sbe, retired_dbe, ecc_off, recovery_action, persistence;
  unsigned long long ecc_volatile_unc, ecc_aggregate_unc;
  int grow_by;
  double grow_at_ms;
};
struct event {
  int gpu;
  double at_ms, stall_ms;
  char call[64];
  int fired;
};
struct mig_handle {
  int magic;
  int gpu;
  int k;
};
struct standin_gpm_sample {
  int magic;
  int gpu;
  int scope;
  double t;
  double v[N_GPM + 4];
  int valid;
};

static struct gpu g_gpus[MAX_GPUS];
static struct mig_handle g_mig[MAX_GPUS][MAX_GI];
static int g_ngpus, g_init, g_init_error, g_stride = 24, g_nsteps, g_gpm_layout = 98;
static double g_step_ms = 100, g_sample_ms = 50;
static struct dyn g_steps[MAX_STEPS][MAX_GPUS];
static struct event g_events[MAX_EVENTS];
static int g_nevents;
static char g_driver[64] = "580.95.05";
static double g_t0_mono, g_t0_wall_us;
static unsigned g_env_pids[64];
static int g_nenv_pids;

static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static double wall_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static double elapsed_ms(void) { return (mono_s() - g_t0_mono) * 1000; }

/* ---------------------------------------------------------------- trace parsing */

static int sel_match(const char* sel, int i) {
  if (!strcmp(sel, "*")) return 1;
  int a = 0, b = 0;
  if (sscanf(sel, "%d-%d", &a, &b) == 2) return i >= a && i <= b;
  return atoi(sel) == i;
}

/* Next token of a line: KEY=VALUE or a word; VALUE may be "quoted". */
static char* token(char** p) {
  while (**p == ' ' || **p == '\t') ++*p;
  if (!**p || **p == '#' || **p == '\n') return NULL;
  char* start = *p;
  int quoted = 0;
  char* out = *p;
  while (**p && (quoted || (**p != ' ' && **p != '\t' && **p != '\n'))) {
    if (**p == '"') {
      quoted = !quoted;
      ++*p;
      continue;
    }
    *out++ = *(*p)++;
  }
  if (**p) ++*p;
  *out = 0;
  return start;
}

static unsigned pid_of(const char* s) {
  if (s[0] == '@') {
    int k = atoi(s + 1);
    return k < g_nenv_pids ? g_env_pids[k] : 0;
  }
  return (unsigned)strtoul(s, NULL, 10);
}

/* The health keys doctor reads (tests/watch/README.md); 0 when the key is not one of them. */
static int set_health(struct gpu* g, const char* k, const char* v) {
  static const char* names[] = {"pstate",        "reset_required", "remap_corr",      "remap_unc",
                                "remap_pending", "remap_failure",  "retire_pending",  "retired_sbe",
                                "retired_dbe",   "ecc_off",        "recovery_action", "persistence"};
  unsigned* fields[] = {&g->pstate,        &g->reset_required, &g->remap_corr,      &g->remap_unc,
                        &g->remap_pending, &g->remap_failure,  &g->retire_pending,  &g->retired_sbe,
                        &g->retired_dbe,   &g->ecc_off,        &g->recovery_action, &g->persistence};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
    if (!strcmp(k, names[i])) {
      *fields[i] = (unsigned)strtoul(v, NULL, 0);
      return 1;
    }
  if (!strcmp(k, "ecc_volatile_unc")) {
    g->ecc_volatile_unc = strtoull(v, NULL, 10);
    return 1;
  }
  if (!strcmp(k, "ecc_aggregate_unc")) {
    g->ecc_aggregate_unc = strtoull(v, NULL, 10);
    return 1;
  }
  return 0;
}

static void set_static(struct gpu* g, const char* k, const char* v) {
  if (!strcmp(k, "name"))
    snprintf(g->name, sizeof g->name, "%s", v);
  else if (!strcmp(k, "uuid"))
    snprintf(g->uuid, sizeof g->uuid, "%s", v);
  else if (!strcmp(k, "arch"))
    g->arch = (unsigned)atoi(v);
  else if (!strcmp(k, "bus"))
    g->bus = (unsigned)strtoul(v, NULL, 16);
  else if (!strcmp(k, "memory_mib"))
    g->memory_mib = atof(v);
  else if (!strcmp(k, "power_default_w"))
    g->power_default_w = atof(v);
  else if (!strcmp(k, "sm_max_mhz"))
    g->sm_max_mhz = (unsigned)atoi(v);
  else if (!strcmp(k, "nvlink_links"))
    g->nvlink_links = (unsigned)atoi(v);
  else if (!strcmp(k, "nvlink_active"))
    g->nvlink_active = (unsigned)atoi(v) + 1; /* 0 = not given: every present link is active */
  else if (!strcmp(k, "nvlink_mbps"))
    g->nvlink_mbps = (unsigned)atoi(v);
  else if (!strcmp(k, "pcie_gen"))
    g->pcie_gen = (unsigned)atoi(v);
  else if (!strcmp(k, "pcie_width"))
    g->pcie_width = (unsigned)atoi(v);
  else if (!strcmp(k, "gpm"))
    g->gpm = (unsigned)atoi(v);
  else if (!strcmp(k, "mig"))
    g->mig = (unsigned)atoi(v);
  else if (!strcmp(k, "instances")) {
    g->ngi = 0;
    for (char* s = (char*)v; *s && g->ngi < MAX_GI;) {
      g->gi[g->ngi++] = (unsigned)strtoul(s, &s, 10);
      if (*s == ',')
        ++s;
      else
        break;
    }
  } else if (!strcmp(k, "pcie_tx_start"))
    g->counters[R_PCIE_TX] = strtoull(v, NULL, 10);
  else if (!strcmp(k, "pcie_rx_start"))
    g->counters[R_PCIE_RX] = strtoull(v, NULL, 10);
  else if (!strcmp(k, "nvlink_tx_start"))
    g->counters[R_NVL_TX] = strtoull(v, NULL, 10);
  else if (!strcmp(k, "nvlink_rx_start"))
    g->counters[R_NVL_RX] = strtoull(v, NULL, 10);
  else if (!strcmp(k, "energy_start_mj"))
    g->energy_mj = atof(v);
  else if (!set_health(g, k, v)) {
    fprintf(stderr, "nvml stand-in: unknown gpu key %s\n", k);
    exit(70);
  }
}

static int gi_slot(const struct gpu* g, int gi) {
  for (unsigned i = 0; i < g->ngi; ++i)
    if ((int)g->gi[i] == gi) return (int)i;
  return -1;
}

static void set_dyn(const struct gpu* g, struct dyn* d, const char* k, const char* v, int* gi) {
  static const char* rates[] = {"pcie_tx_bps", "pcie_rx_bps", "nvlink_tx_bps", "nvlink_rx_bps"};
  static const char* times[] = {"powercap_ratio", "syncboost_ratio", "swtherm_ratio", "hwtherm_ratio",
                                "brake_ratio"};
  static const char* gpm[] = {"sm_active", "sm_occ", "tensor", "dram"};
  if (!strcmp(k, "gi")) {
    *gi = gi_slot(g, atoi(v));
    if (*gi < 0) {
      fprintf(stderr, "nvml stand-in: no instance %s\n", v);
      exit(70);
    }
    return;
  }
  for (int i = 0; i < N_GPM; ++i)
    if (!strcmp(k, gpm[i])) {
      if (*gi >= 0)
        d->mig_gpm[*gi][i] = atof(v);
      else
        d->gpm[i] = atof(v);
      return;
    }
  for (int i = 0; i < N_RATES; ++i)
    if (!strcmp(k, rates[i])) {
      d->rates[i] = atof(v);
      return;
    }
  for (int i = 0; i < N_TIMES; ++i)
    if (!strcmp(k, times[i])) {
      d->times[i] = atof(v);
      return;
    }
  if (!strcmp(k, "duty")) {
    d->nduty = 0;
    d->duty_none = !strcmp(v, "none");
    for (char* s = (char*)v; !d->duty_none && *s && d->nduty < MAX_DUTY;) {
      d->duty[d->nduty++] = (int)strtol(s, &s, 10);
      if (*s == ',')
        ++s;
      else
        break;
    }
  } else if (!strcmp(k, "mem_used_mib"))
    d->mem_used_mib = atof(v);
  else if (!strcmp(k, "power_w"))
    d->power_w = atof(v);
  else if (!strcmp(k, "power_limit_w"))
    d->power_limit_w = atof(v);
  else if (!strcmp(k, "sm_mhz"))
    d->sm_mhz = (unsigned)atoi(v);
  else if (!strcmp(k, "temp_c")) {
    d->temp_c = atof(v);
    d->has_temp = 1;
  } else if (!strcmp(k, "reasons"))
    d->reasons = strtoull(v, NULL, 0);
  else if (!strcmp(k, "procs")) {
    d->nprocs = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *e = strtok_r(buf, ",", &save); e && d->nprocs < MAX_PROCS;
         e = strtok_r(NULL, ",", &save)) {
      if (!strcmp(e, "none")) break;
      struct proc* p = &d->procs[d->nprocs++];
      char pid[32] = "";
      p->mem_mib = 0;
      p->gi = -1;
      sscanf(e, "%31[^:]:%lf:%d", pid, &p->mem_mib, &p->gi);
      p->pid = pid_of(pid);
    }
  } else {
    fprintf(stderr, "nvml stand-in: unknown step key %s\n", k);
    exit(70);
  }
}

static int load_trace(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  const char* env = getenv("GPUPREP_STANDIN_PIDS");
  for (char* s = (char*)(env ? env : ""); *s && g_nenv_pids < 64;) {
    while (*s == ' ') ++s;
    if (!*s) break;
    g_env_pids[g_nenv_pids++] = (unsigned)strtoul(s, &s, 10);
  }
  char line[2048];
  int step = -1, saw_gpus = 0;
  while (fgets(line, sizeof line, f)) {
    char* p = line;
    char* word = token(&p);
    if (!word) continue;
    if (!strcmp(word, "gpus")) {
      saw_gpus = 1;
      g_ngpus = atoi(token(&p));
      if (g_ngpus > MAX_GPUS) g_ngpus = MAX_GPUS;
      for (int i = 0; i < g_ngpus; ++i) {
        struct gpu* g = &g_gpus[i];
        snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
        g->arch = 9;
        g->bus = 0x18 + 0x11 * (unsigned)i;
        g->memory_mib = 81559;
        g->power_default_w = 700;
        g->sm_max_mhz = 1980;
        g->pcie_gen = 5;
        g->pcie_width = 16;
        g->lost_at_ms = -1;
        g->grow_at_ms = -1;
        pthread_mutex_init(&g->mu, NULL);
      }
    } else if (!strcmp(word, "driver"))
      snprintf(g_driver, sizeof g_driver, "%s", token(&p));
    else if (!strcmp(word, "process_stride"))
      g_stride = atoi(token(&p));
    else if (!strcmp(word, "gpm_layout"))
      g_gpm_layout = atoi(token(&p));
    else if (!strcmp(word, "step_ms"))
      g_step_ms = atof(token(&p));
    else if (!strcmp(word, "sample_ms"))
      g_sample_ms = atof(token(&p));
    else if (!strcmp(word, "init_error"))
      g_init_error = atoi(token(&p));
    else if (!strcmp(word, "expect"))
      continue; /* read by the test script, not by NVML */
    else if (!strcmp(word, "gpu") || !strcmp(word, "at") || !strcmp(word, "event") ||
             !strcmp(word, "unsupported")) {
      char sel[32];
      snprintf(sel, sizeof sel, "%s", token(&p));
      char* kv[32];
      int n = 0;
      for (char* t; n < 32 && (t = token(&p));) kv[n++] = t;
      for (int i = 0; i < g_ngpus; ++i) {
        if (!sel_match(sel, i)) continue;
        int gi = -1;
        double at = 0, stall = 0;
        char call[64] = "";
        int lost = 0, grow = 0;
        for (int k = 0; k < n; ++k) {
          char* eq = strchr(kv[k], '=');
          char key[64];
          const char* val = eq ? eq + 1 : "";
          snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - kv[k]) : (int)strlen(kv[k]), kv[k]);
          if (!strcmp(word, "gpu"))
            set_static(&g_gpus[i], key, val);
          else if (!strcmp(word, "at")) {
            if (step < 0) {
              fprintf(stderr, "nvml stand-in: 'at' before 'step'\n");
              exit(70);
            }
            set_dyn(&g_gpus[i], &g_steps[step][i], key, val, &gi);
          } else if (!strcmp(word, "unsupported")) {
            if (!strcmp(key, "field") && g_gpus[i].nunsupported_fields < 32)
              g_gpus[i].unsupported_fields[g_gpus[i].nunsupported_fields++] = atoi(val);
            if (!strcmp(key, "call") && g_gpus[i].nunsupported_calls < 8)
              snprintf(g_gpus[i].unsupported_calls[g_gpus[i].nunsupported_calls++], 64, "%s", val);
          } else {
            if (!strcmp(key, "at_ms"))
              at = atof(val);
            else if (!strcmp(key, "stall_ms"))
              stall = atof(val);
            else if (!strcmp(key, "call"))
              snprintf(call, sizeof call, "%s", val);
            else if (!strcmp(key, "lost"))
              lost = 1;
            else if (!strcmp(key, "grow"))
              grow = atoi(val);
          }
        }
        if (!strcmp(word, "event")) {
          if (lost) g_gpus[i].lost_at_ms = at;
          if (grow) {
            g_gpus[i].grow_by = grow;
            g_gpus[i].grow_at_ms = at;
          }
          if (stall > 0 && g_nevents < MAX_EVENTS) {
            struct event* e = &g_events[g_nevents++];
            e->gpu = i;
            e->at_ms = at;
            e->stall_ms = stall;
            snprintf(e->call, sizeof e->call, "%s", call);
          }
        }
      }
    } else if (!strcmp(word, "step")) {
      if (step + 1 >= MAX_STEPS) break;
      ++step;
      if (step > 0) memcpy(g_steps[step], g_steps[step - 1], sizeof g_steps[step]); /* values persist */
    } else {
      fprintf(stderr, "nvml stand-in: unknown line %s\n", word);
      exit(70);
    }
  }
  fclose(f);
  g_nsteps = step + 1;
  for (int i = 0; i < g_ngpus; ++i) {
    struct gpu* g = &g_gpus[i];
    if (!g->uuid[0])
      snprintf(g->uuid, sizeof g->uuid, "GPU-%08x-5151-4d0c-8e2a-%012x", 0x5eedu * (unsigned)(i + 1), g->bus);
    for (unsigned k = 0; k < g->ngi; ++k) g_mig[i][k] = (struct mig_handle){0x4d494721, i, (int)k};
  }
  if (!saw_gpus || (g_ngpus > 0 && g_nsteps == 0)) return -1;
  if (g_nsteps == 0) g_nsteps = 1; /* a host with no GPU */
  return 0;
}

/* ---------------------------------------------------------------- time integration */

static const struct dyn* dyn_at(int gpu, double ms) {
  long long k = (long long)(ms / g_step_ms);
  return &g_steps[k % g_nsteps][gpu];
}

/* Integrates the trace from the GPU's last update to now; the caller holds g->mu. */
static void advance(int i) {
  struct gpu* g = &g_gpus[i];
  const double now = elapsed_ms();
  double t = g->last_s * 1000;
  while (t < now) {
    const double boundary = ((long long)(t / g_step_ms) + 1) * g_step_ms;
    const double end = boundary < now ? boundary : now;
    const double dt = (end - t) / 1000;
    const struct dyn* d = dyn_at(i, t);
    g->energy_mj += d->power_w * 1000 * dt;
    for (int r = 0; r < N_RATES; ++r) {
      const double add = d->rates[r] * dt / (r >= R_NVL_TX ? 1024.0 : 1.0) + g->counter_frac[r];
      const unsigned long long whole = (unsigned long long)add;
      g->counter_frac[r] = add - (double)whole;
      g->counters[r] += whole; /* wraps at 2^64, as "Value can be wrapped" allows */
    }
    for (int k = 0; k < N_TIMES; ++k) g->ns[k] += d->times[k] * dt * 1e9;
    for (int m = 0; m < N_GPM; ++m) g->gpm_int[0][m] += d->gpm[m] * dt;
    for (int r = 0; r < N_RATES; ++r) g->gpm_int[0][N_GPM + r] += d->rates[r] / 1048576.0 * dt;
    for (unsigned k = 0; k < g->ngi; ++k)
      for (int m = 0; m < N_GPM; ++m) g->gpm_int[1 + k][m] += d->mig_gpm[k][m] * dt;
    t = end;
  }
  /* utilisation samples, one per sample_ms slot */
  for (; g->next_slot * g_sample_ms <= now; ++g->next_slot) {
    const double slot_ms = (double)g->next_slot * g_sample_ms;
    const struct dyn* d = dyn_at(i, slot_ms);
    if (d->duty_none || d->nduty == 0) continue; /* the buffer runs dry while no kernel runs */
    nvmlSample_t* s = &g->ring[(g->ring_head + g->ring_len) % RING];
    if (g->ring_len == RING)
      g->ring_head = (g->ring_head + 1) % RING;
    else
      ++g->ring_len;
    s->timeStamp = (unsigned long long)(g_t0_wall_us + slot_ms * 1000);
    s->sampleValue.uiVal = (unsigned)d->duty[g->next_slot % d->nduty];
  }
  g->last_s = now / 1000;
}

/* ---------------------------------------------------------------- helpers for every call */

static int gpu_index(const void* dev) {
  for (int i = 0; i < g_ngpus; ++i)
    if (dev == &g_gpus[i]) return i;
  return -1;
}

/* A configured stall sleeps once, outside any lock, past the caller's deadline. */
static void maybe_stall(int i, const char* call) {
  for (int k = 0; k < g_nevents; ++k) {
    struct event* e = &g_events[k];
    if (e->gpu != i || e->fired || strcmp(e->call, call) || elapsed_ms() < e->at_ms) continue;
    e->fired = 1;
    usleep((useconds_t)(e->stall_ms * 1000));
  }
}

static int call_unsupported(const struct gpu* g, const char* call) {
  for (int k = 0; k < g->nunsupported_calls; ++k)
    if (!strcmp(g->unsupported_calls[k], call)) return 1;
  return 0;
}

/* The start of every device call: initialised, a known handle, not lost, maybe a stall. */
#define DEVICE_CALL(dev, callname)                                                        \
  if (!g_init) return NVML_ERROR_UNINITIALIZED;                                           \
  const int gi_ = gpu_index(dev);                                                         \
  if (gi_ < 0) return NVML_ERROR_INVALID_ARGUMENT;                                        \
  struct gpu* const g = &g_gpus[gi_];                                                     \
  maybe_stall(gi_, callname);                                                             \
  if (g->lost_at_ms >= 0 && elapsed_ms() >= g->lost_at_ms) return NVML_ERROR_GPU_IS_LOST; \
  if (call_unsupported(g, callname)) return NVML_ERROR_NOT_SUPPORTED;                     \
  pthread_mutex_lock(&g->mu);                                                             \
  advance(gi_);                                                                           \
  const struct dyn* const d = dyn_at(gi_, elapsed_ms());                                  \
  (void)d;

#define RETURN(x)                 \
  do {                            \
    pthread_mutex_unlock(&g->mu); \
    return (x);                   \
  } while (0)

/* ---------------------------------------------------------------- NVML */

nvmlReturn_t nvmlInit_v2(void) {
  const char* path = getenv("GPUPREP_STANDIN_TRACE");
  static int loaded = 0;
  if (!path) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (!loaded) {
    if (load_trace(path) != 0) return NVML_ERROR_DRIVER_NOT_LOADED;
    loaded = 1;
  }
  if (g_init_error) return g_init_error;
  if (!g_init) {
    g_t0_mono = mono_s();
    g_t0_wall_us = wall_us();
  }
  ++g_init;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown(void) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  --g_init;
  const char* log = getenv("GPUPREP_STANDIN_LOG");
  if (log) {
    FILE* f = fopen(log, "a");
    if (f) {
      fprintf(f, "nvmlShutdown\n");
      fclose(f);
    }
  }
  return NVML_SUCCESS;
}
const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
      return "Reset required";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned n) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!v || strlen(g_driver) + 1 > n) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(v, g_driver);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = (unsigned)g_ngpus;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!dev || i >= (unsigned)g_ngpus) return NVML_ERROR_INVALID_ARGUMENT;
  *dev = &g_gpus[i];
  return NVML_SUCCESS;
}
static nvmlReturn_t copy_str(char* out, unsigned n, const char* s) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > n) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(out, s);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(void* dev, char* out, unsigned n) {
  DEVICE_CALL(dev, "nvmlDeviceGetUUID");
  RETURN(copy_str(out, n, g->uuid));
}
nvmlReturn_t nvmlDeviceGetName(void* dev, char* out, unsigned n) {
  DEVICE_CALL(dev, "nvmlDeviceGetName");
  RETURN(copy_str(out, n, g->name));
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(void* dev, nvmlPciInfo_t* p) {
  DEVICE_CALL(dev, "nvmlDeviceGetPciInfo_v3");
  if (!p) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  memset(p, 0, sizeof *p);
  p->bus = g->bus;
  p->pciDeviceId = 0x233010de;
  snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", g->bus);
  snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", g->bus);
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetArchitecture(void* dev, unsigned* a) {
  DEVICE_CALL(dev, "nvmlDeviceGetArchitecture");
  *a = g->arch;
  RETURN(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetSamples(void* dev, int type, unsigned long long last_seen, int* vtype,
                                  unsigned* count, nvmlSample_t* out) {
  DEVICE_CALL(dev, "nvmlDeviceGetSamples");
  if (!count || !vtype) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  /* "On MIG-enabled GPUs, querying ... NVML_GPU_UTILIZATION_SAMPLES ... is not currently supported." */
  if (type != 1 || g->mig) RETURN(NVML_ERROR_NOT_SUPPORTED);
  *vtype = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
  if (!out) {
    *count = RING;
    RETURN(NVML_SUCCESS);
  }
  if (*count == 0) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  unsigned n = 0;
  for (int k = 0; k < g->ring_len && n < *count; ++k) {
    const nvmlSample_t* s = &g->ring[(g->ring_head + k) % RING];
    if (s->timeStamp > last_seen) out[n++] = *s;
  }
  *count = n;
  RETURN(n ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(void* dev, nvmlMemory_v2_t* m) {
  DEVICE_CALL(dev, "nvmlDeviceGetMemoryInfo_v2");
  if (!m) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  if (m->version != (sizeof(nvmlMemory_v2_t) | (2u << 24))) RETURN(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  m->total = (unsigned long long)(g->memory_mib * 1048576);
  m->reserved = 512ull << 20;
  m->used = (unsigned long long)(d->mem_used_mib * 1048576);
  m->free = m->total - m->reserved - m->used;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(void* dev, nvmlMemory_t* m) {
  DEVICE_CALL(dev, "nvmlDeviceGetMemoryInfo");
  if (!m) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  m->total = (unsigned long long)(g->memory_mib * 1048576);
  m->used = (unsigned long long)(d->mem_used_mib * 1048576) + (512ull << 20); /* v1: reserved + allocated */
  m->free = m->total - m->used;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetPowerUsage(void* dev, unsigned* mw) {
  DEVICE_CALL(dev, "nvmlDeviceGetPowerUsage");
  *mw = (unsigned)(d->power_w * 1000);
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(void* dev, unsigned* mw) {
  DEVICE_CALL(dev, "nvmlDeviceGetEnforcedPowerLimit");
  *mw = (unsigned)((d->power_limit_w > 0 ? d->power_limit_w : g->power_default_w) * 1000);
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(void* dev, unsigned* mw) {
  DEVICE_CALL(dev, "nvmlDeviceGetPowerManagementDefaultLimit");
  *mw = (unsigned)(g->power_default_w * 1000);
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(void* dev, unsigned long long* mj) {
  DEVICE_CALL(dev, "nvmlDeviceGetTotalEnergyConsumption");
  *mj = (unsigned long long)g->energy_mj;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetClockInfo(void* dev, int type, unsigned* mhz) {
  DEVICE_CALL(dev, "nvmlDeviceGetClockInfo");
  if (type != 1) RETURN(NVML_ERROR_NOT_SUPPORTED);
  *mhz = d->sm_mhz;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetTemperature(void* dev, int sensor, unsigned* c) {
  DEVICE_CALL(dev, "nvmlDeviceGetTemperature");
  if (sensor != 0) RETURN(NVML_ERROR_INVALID_ARGUMENT); /* NVML_TEMPERATURE_GPU is the only sensor */
  if (!d->has_temp) RETURN(NVML_ERROR_NOT_SUPPORTED);
  *c = (unsigned)d->temp_c;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(void* dev, int type, unsigned* mhz) {
  DEVICE_CALL(dev, "nvmlDeviceGetMaxClockInfo");
  if (type != 1) RETURN(NVML_ERROR_NOT_SUPPORTED);
  *mhz = g->sm_max_mhz;
  RETURN(NVML_SUCCESS);
}
#ifndef STANDIN_LEGACY
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* r) {
  DEVICE_CALL(dev, "nvmlDeviceGetCurrentClocksEventReasons");
  *r = d->reasons;
  RETURN(NVML_SUCCESS);
}
#endif
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(void* dev, unsigned long long* r) {
  DEVICE_CALL(dev, "nvmlDeviceGetCurrentClocksThrottleReasons");
  *r = d->reasons;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(void* dev, unsigned* v) {
  DEVICE_CALL(dev, "nvmlDeviceGetMaxPcieLinkGeneration");
  *v = g->pcie_gen;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(void* dev, unsigned* v) {
  DEVICE_CALL(dev, "nvmlDeviceGetMaxPcieLinkWidth");
  *v = g->pcie_width;
  RETURN(NVML_SUCCESS);
}

/* "Retrieve PCIe utilization information. This function is querying a byte counter over a 20ms interval"
 * (nvml.h): it blocks that long. gpuprep must never call it in its loop; each call is logged. */
nvmlReturn_t nvmlDeviceGetPcieThroughput(void* dev, int counter, unsigned* kbps) {
  DEVICE_CALL(dev, "nvmlDeviceGetPcieThroughput");
  pthread_mutex_unlock(&g->mu);
  const char* log = getenv("GPUPREP_STANDIN_LOG");
  if (log) {
    FILE* f = fopen(log, "a");
    if (f) {
      fprintf(f, "nvmlDeviceGetPcieThroughput\n");
      fclose(f);
    }
  }
  usleep(20000);
  if (!kbps || counter < 0 || counter > 1) return NVML_ERROR_INVALID_ARGUMENT;
  *kbps = 0;
  return NVML_SUCCESS;
}

static int field_unsupported(const struct gpu* g, unsigned id) {
  for (int k = 0; k < g->nunsupported_fields; ++k)
    if ((unsigned)g->unsupported_fields[k] == id) return 1;
  return 0;
}
nvmlReturn_t nvmlDeviceGetFieldValues(void* dev, int n, nvmlFieldValue_t* v) {
  DEVICE_CALL(dev, "nvmlDeviceGetFieldValues");
  if (n <= 0 || !v) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  const long long now = (long long)(g_t0_wall_us + elapsed_ms() * 1000);
  for (int k = 0; k < n; ++k) {
    nvmlFieldValue_t* f = &v[k];
    f->timestamp = now;
    f->latencyUsec = 1;
    f->valueType = 3; /* UNSIGNED_LONG_LONG */
    f->nvmlReturn = NVML_SUCCESS;
    const int nvlink = g->nvlink_links > 0;
    if (field_unsupported(g, f->fieldId)) {
      f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    switch (f->fieldId) {
      case 74:
        f->value.ullVal = (unsigned long long)g->ns[T_POWERCAP];
        break;
      case 76:
        f->value.ullVal = (unsigned long long)g->ns[T_SYNCBOOST];
        break;
      case 269:
        f->value.ullVal = (unsigned long long)g->ns[T_SWTHERM];
        break;
      case 270:
        f->value.ullVal = (unsigned long long)g->ns[T_HWTHERM];
        break;
      case 271:
        f->value.ullVal = (unsigned long long)g->ns[T_BRAKE];
        break;
      case 197:
        f->value.ullVal = g->counters[R_PCIE_TX];
        break;
      case 198:
        f->value.ullVal = g->counters[R_PCIE_RX];
        break;
      case 90:
        f->valueType = 1;
        if (nvlink)
          f->value.uiVal = g->nvlink_mbps;
        else
          f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
      case 91:
        f->valueType = 1;
        f->value.uiVal = g->nvlink_links;
        break;
      case 230: /* NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (nvmlDeviceGpuRecoveryAction_t) */
        f->valueType = 1;
        f->value.uiVal = g->recovery_action;
        break;
      case 165: /* NVML_FI_DEV_NVLINK_GET_STATE, scopeId = the link: 1 active (NVML_FEATURE_ENABLED), 0 not */
        f->valueType = 1;
        if (!nvlink || f->scopeId >= g->nvlink_links)
          f->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
        else
          f->value.uiVal = !g->nvlink_active || f->scopeId + 1 < g->nvlink_active;
        break;
      case 138:
      case 139:
        /* scopeId UINT_MAX = the sum over all links (nvml.h); per-link scopes are not modelled */
        if (!nvlink || f->scopeId != 0xFFFFFFFFu) {
          f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
          break;
        }
        f->value.ullVal = g->counters[f->fieldId == 138 ? R_NVL_TX : R_NVL_RX];
        break;
      default:
        f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  RETURN(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned* count, void* infos) {
  DEVICE_CALL(dev, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!count) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  struct proc list[MAX_PROCS * 2];
  unsigned n = 0;
  for (int k = 0; k < d->nprocs; ++k) list[n++] = d->procs[k];
  /* a list that grows: from grow_at_ms on, `grow_by` more contexts (the same processes again) */
  if (g->grow_at_ms >= 0 && elapsed_ms() >= g->grow_at_ms)
    for (int k = 0; k < g->grow_by && d->nprocs > 0 && n < MAX_PROCS * 2; ++k) {
      list[n] = d->procs[k % d->nprocs];
      list[n++].mem_mib = 0;
    }
  if (*count < n || (n > 0 && !infos)) {
    *count = n;
    RETURN(n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS);
  }
  unsigned char* out = infos;
  for (unsigned k = 0; k < n; ++k) {
    unsigned char* e = out + (size_t)k * (size_t)g_stride;
    memset(e, 0, (size_t)g_stride);
    const unsigned long long mem = (unsigned long long)(list[k].mem_mib * 1048576);
    const unsigned none = 0xFFFFFFFFu, gi = list[k].gi >= 0 ? (unsigned)list[k].gi : none,
                   ci = list[k].gi >= 0 ? 0 : none;
    memcpy(e, &list[k].pid, 4);
    memcpy(e + 8, &mem, 8);
    if (g_stride >= 24) {
      memcpy(e + 16, &gi, 4);
      memcpy(e + 20, &ci, 4);
    }
    /* g_stride 32: R535's usedGpuCcProtectedMemory at 24, left 0 */
  }
  *count = n;
  RETURN(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigMode(void* dev, unsigned* cur, unsigned* pending) {
  DEVICE_CALL(dev, "nvmlDeviceGetMigMode");
  if (g->arch < 8) RETURN(NVML_ERROR_NOT_SUPPORTED); /* MIG starts with Ampere */
  *cur = *pending = g->mig;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(void* dev, unsigned* n) {
  DEVICE_CALL(dev, "nvmlDeviceGetMaxMigDeviceCount");
  *n = g->mig ? 7 : 0;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(void* dev, unsigned k, void** mig) {
  DEVICE_CALL(dev, "nvmlDeviceGetMigDeviceHandleByIndex");
  if (!g->mig || k >= g->ngi) RETURN(NVML_ERROR_NOT_FOUND);
  *mig = &g_mig[gi_][k];
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetGpuInstanceId(void* mig, unsigned* id) {
  const struct mig_handle* h = mig;
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!h || h->magic != 0x4d494721) return NVML_ERROR_INVALID_ARGUMENT;
  *id = g_gpus[h->gpu].gi[h->k];
  return NVML_SUCCESS;
}

/* GPM: "For Hopper or newer fully supported devices" (nvml.h). */
nvmlReturn_t nvmlGpmQueryDeviceSupport(void* dev, nvmlGpmSupport_t* s) {
  DEVICE_CALL(dev, "nvmlGpmQueryDeviceSupport");
  if (!s) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  if (s->version != 1) RETURN(NVML_ERROR_ARGUMENT_VERSION_MISMATCH); /* the raw 1, not NVML_STRUCT_VERSION */
  s->isSupportedDevice = g->gpm && g->arch >= 9;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* s) {
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  *s = calloc(1, sizeof **s);
  (*s)->magic = 0x47504d31;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
  if (!s || s->magic != 0x47504d31) return NVML_ERROR_INVALID_ARGUMENT;
  s->magic = 0;
  free(s);
  return NVML_SUCCESS;
}
static nvmlReturn_t gpm_take(struct gpu* g, int gpu, int scope, nvmlGpmSample_t s) {
  if (!s || s->magic != 0x47504d31) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->gpm || g->arch < 9) return NVML_ERROR_NOT_SUPPORTED;
  s->gpu = gpu;
  s->scope = scope;
  s->t = g->last_s;
  memcpy(s->v, g->gpm_int[scope], sizeof s->v);
  s->valid = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleGet(void* dev, nvmlGpmSample_t s) {
  DEVICE_CALL(dev, "nvmlGpmSampleGet");
  if (g->mig) RETURN(NVML_ERROR_NOT_SUPPORTED);
  RETURN(gpm_take(g, gi_, 0, s));
}
nvmlReturn_t nvmlGpmMigSampleGet(void* dev, unsigned gpu_instance, nvmlGpmSample_t s) {
  DEVICE_CALL(dev, "nvmlGpmMigSampleGet");
  const int k = gi_slot(g, (int)gpu_instance);
  if (!g->mig || k < 0) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  RETURN(gpm_take(g, gi_, 1 + k, s));
}
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  if (m->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (m->numMetrics > 98) return NVML_ERROR_INVALID_ARGUMENT;
  if (g_gpm_layout == 333) {
    static nvmlGpmMetricsGet333_t whole; /* the struct as such a driver sees it (calls are serialised here) */
    static const nvmlGpmMetric_t zero;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    memcpy(&whole, m, sizeof whole);
    int dirty = 0;
    for (unsigned k = m->numMetrics; k < 333; ++k)
      dirty |= memcmp(&whole.metrics[k], &zero, sizeof zero) != 0;
    pthread_mutex_unlock(&mu);
    if (dirty) return NVML_ERROR_INVALID_ARGUMENT;
  }
  const struct standin_gpm_sample *a = m->sample1, *b = m->sample2;
  if (!a || !b || a->magic != 0x47504d31 || b->magic != 0x47504d31 || !a->valid || !b->valid)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (a->gpu != b->gpu || a->scope != b->scope || b->t <= a->t) return NVML_ERROR_INVALID_ARGUMENT;
  const double dt = b->t - a->t;
  for (unsigned k = 0; k < m->numMetrics; ++k) {
    nvmlGpmMetric_t* x = &m->metrics[k];
    int slot = -1;
    switch (x->metricId) {
      case 2:
        slot = G_SM;
        break;
      case 3:
        slot = G_OCC;
        break;
      case 5:
        slot = G_TENSOR;
        break;
      case 10:
        slot = G_DRAM;
        break;
      case 20:
        slot = N_GPM + R_PCIE_TX;
        break;
      case 21:
        slot = N_GPM + R_PCIE_RX;
        break;
      case 61:
        slot = N_GPM + R_NVL_TX;
        break;
      case 60:
        slot = N_GPM + R_NVL_RX;
        break;
    }
    if (slot < 0 || (a->scope > 0 && slot >= N_GPM)) {
      x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    x->nvmlReturn = NVML_SUCCESS;
    x->value = (b->v[slot] - a->v[slot]) / dt;
  }
  return NVML_SUCCESS;
}

/* ---------------------------------------------------------------- health (doctor) */

/* nvmlDeviceGetHandleByPciBusId_v2: "0000:18:00.0" (domain 0, device 0 in this stand-in). A GPU that fell
 * off the bus answers GPU_IS_LOST, one that needs a reset RESET_REQUIRED, an address NVML does not drive
 * NOT_FOUND. */
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** dev) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (!bus_id || !dev || sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4)
    return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < g_ngpus; ++i) {
    struct gpu* g = &g_gpus[i];
    if (domain != 0 || bus != g->bus || device != 0 || function != 0) continue;
    if (g->lost_at_ms >= 0 && elapsed_ms() >= g->lost_at_ms) return NVML_ERROR_GPU_IS_LOST;
    if (g->reset_required) return NVML_ERROR_RESET_REQUIRED;
    *dev = g;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}
/* nvmlPstates_t: 0 = P0 ... 15, 32 unknown. */
nvmlReturn_t nvmlDeviceGetPerformanceState(void* dev, unsigned* p) {
  DEVICE_CALL(dev, "nvmlDeviceGetPerformanceState");
  if (!p) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  *p = g->pstate;
  RETURN(NVML_SUCCESS);
}
/* Row remapping: "For Ampere or newer fully supported devices" (NVML_DEVICE_ARCH_AMPERE = 7). */
nvmlReturn_t nvmlDeviceGetRemappedRows(void* dev, unsigned* corr, unsigned* unc, unsigned* pending,
                                       unsigned* failure) {
  DEVICE_CALL(dev, "nvmlDeviceGetRemappedRows");
  if (g->arch < 7) RETURN(NVML_ERROR_NOT_SUPPORTED);
  if (!corr || !unc || !pending || !failure) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  *corr = g->remap_corr;
  *unc = g->remap_unc;
  *pending = g->remap_pending;
  *failure = g->remap_failure;
  RETURN(NVML_SUCCESS);
}
/* Page retirement: the boards before Ampere (Kepler through Turing here); Ampere and newer remap rows. */
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(void* dev, unsigned* is_pending) {
  DEVICE_CALL(dev, "nvmlDeviceGetRetiredPagesPendingStatus");
  if (g->arch >= 7) RETURN(NVML_ERROR_NOT_SUPPORTED);
  if (!is_pending) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  *is_pending = g->retire_pending ? 1 : 0; /* nvmlEnableState_t */
  RETURN(NVML_SUCCESS);
}
/* cause 0: multiple single-bit errors, 1: double-bit. *count 0 asks for the number only: INSUFFICIENT_SIZE
 * with the number when there are pages. */
nvmlReturn_t nvmlDeviceGetRetiredPages_v2(void* dev, int cause, unsigned* count,
                                          unsigned long long* addresses, unsigned long long* timestamps) {
  DEVICE_CALL(dev, "nvmlDeviceGetRetiredPages_v2");
  if (g->arch >= 7) RETURN(NVML_ERROR_NOT_SUPPORTED);
  if (!count || cause < 0 || cause > 1) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  const unsigned n = cause ? g->retired_dbe : g->retired_sbe;
  if (*count < n) {
    *count = n;
    RETURN(NVML_ERROR_INSUFFICIENT_SIZE);
  }
  for (unsigned k = 0; k < n; ++k) {
    if (addresses) addresses[k] = 0x1000ull * (k + 1);
    if (timestamps) timestamps[k] = 1700000000ull + k;
  }
  *count = n;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetEccMode(void* dev, unsigned* current, unsigned* pending) {
  DEVICE_CALL(dev, "nvmlDeviceGetEccMode");
  if (!current || !pending) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  *current = *pending = g->ecc_off ? 0 : 1;
  RETURN(NVML_SUCCESS);
}
/* type 1 = NVML_MEMORY_ERROR_TYPE_UNCORRECTED; counter 0 volatile, 1 aggregate. */
nvmlReturn_t nvmlDeviceGetTotalEccErrors(void* dev, int type, int counter, unsigned long long* n) {
  DEVICE_CALL(dev, "nvmlDeviceGetTotalEccErrors");
  if (!n || type < 0 || type > 1 || counter < 0 || counter > 1) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  if (g->ecc_off) RETURN(NVML_ERROR_NOT_SUPPORTED);
  *n = type == 0 ? 0 : counter == 0 ? g->ecc_volatile_unc : g->ecc_aggregate_unc;
  RETURN(NVML_SUCCESS);
}
nvmlReturn_t nvmlDeviceGetPersistenceMode(void* dev, unsigned* mode) {
  DEVICE_CALL(dev, "nvmlDeviceGetPersistenceMode");
  if (!mode) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  *mode = g->persistence ? 1 : 0;
  RETURN(NVML_SUCCESS);
}
