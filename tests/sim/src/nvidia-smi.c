/* Stand-in nvidia-smi for the simulated GPU server (tests/sim): the output formats of the real tool for
 * the forms gpuprep and people use (-L, --query-gpu=... --format=csv[,noheader][,nounits], --version, the
 * summary header, and the NVML failure messages), through the stand-in libnvidia-ml.so.1 (dlopen). Its own
 * version is the NVML library's (they ship in the same package), so one build serves every release. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void* dev_t_;
typedef struct {
  unsigned long long total, free, used;
} mem_t;

static int (*Init)(void);
static const char* (*ErrorString)(int);
static int (*DriverVersion)(char*, unsigned);
static int (*Count)(unsigned*);
static int (*Handle)(unsigned, dev_t_*);
static int (*Name)(dev_t_, char*, unsigned);
static int (*Uuid)(dev_t_, char*, unsigned);
static int (*Memory)(dev_t_, mem_t*);
static int (*Cc)(dev_t_, int*, int*);
static int (*CudaVersion)(int*);
static const char* (*BusId)(dev_t_);
static int (*NvmlVersion)(char*, unsigned);
static char g_version[64]; /* this nvidia-smi's (= the NVML library's) driver version, "580.95.05" */

static void load(void) {
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!h) {
    printf(
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
        "Display Driver is properly installed and present in your system.\nPlease also try adding directory "
        "that contains libnvidia-ml.so to your system PATH.\n");
    exit(12);
  }
#define SYM(var, name) *(void**)&var = dlsym(h, name)
  SYM(Init, "nvmlInit_v2");
  SYM(ErrorString, "nvmlErrorString");
  SYM(DriverVersion, "nvmlSystemGetDriverVersion");
  SYM(Count, "nvmlDeviceGetCount_v2");
  SYM(Handle, "nvmlDeviceGetHandleByIndex_v2");
  SYM(Name, "nvmlDeviceGetName");
  SYM(Uuid, "nvmlDeviceGetUUID");
  SYM(Memory, "nvmlDeviceGetMemoryInfo");
  SYM(Cc, "nvmlDeviceGetCudaComputeCapability");
  SYM(CudaVersion, "nvmlSystemGetCudaDriverVersion_v2");
  SYM(BusId, "simNvmlDeviceBusId");
  SYM(NvmlVersion, "nvmlSystemGetNVMLVersion");
#undef SYM
  char nv[80] = "";
  if (NvmlVersion) NvmlVersion(nv, sizeof nv); /* "13.580.95.05": CUDA major, then the driver version */
  const char* dot = strchr(nv, '.');
  snprintf(g_version, sizeof g_version, "%s", dot ? dot + 1 : nv);
  int r = Init();
  if (r == 9) {
    printf(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
        "latest NVIDIA driver is installed and running.\n\n");
    exit(9);
  }
  if (r == 18) {
    char v[64];
    snprintf(v, sizeof v, "%s", g_version);
    char* last = strrchr(v, '.');
    if (last && last != strchr(v, '.')) *last = 0; /* "535.129.03" -> "535.129" */
    printf("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: %s\n", v);
    exit(18);
  }
  if (r != 0) {
    printf("Failed to initialize NVML: %s\n", ErrorString(r));
    exit(r);
  }
}

/* nvidia-smi prints an 8-digit domain and upper-case hex: 00000000:AB:00.0 */
static void bus_id(dev_t_ d, char* buf, size_t n) {
  snprintf(buf, n, "0000%s", BusId(d));
  for (char* p = buf; *p; ++p) *p = (char)(*p >= 'a' && *p <= 'f' ? *p - 32 : *p);
}

static const char* field(dev_t_ d, unsigned idx, const char* f, int units, char* buf, size_t n, int header) {
  mem_t m;
  int maj, min;
  if (!strcmp(f, "index")) {
    if (header) return "index";
    snprintf(buf, n, "%u", idx);
  } else if (!strcmp(f, "name") || !strcmp(f, "gpu_name")) {
    if (header) return "name";
    Name(d, buf, (unsigned)n);
  } else if (!strcmp(f, "uuid") || !strcmp(f, "gpu_uuid")) {
    if (header) return "uuid";
    Uuid(d, buf, (unsigned)n);
  } else if (!strcmp(f, "driver_version")) {
    if (header) return "driver_version";
    DriverVersion(buf, (unsigned)n);
  } else if (!strcmp(f, "count")) {
    if (header) return "count";
    unsigned c = 0;
    Count(&c);
    snprintf(buf, n, "%u", c);
  } else if (!strcmp(f, "pci.bus_id") || !strcmp(f, "gpu_bus_id")) {
    if (header) return "pci.bus_id";
    bus_id(d, buf, n);
  } else if (!strcmp(f, "compute_cap")) {
    if (header) return "compute_cap";
    Cc(d, &maj, &min);
    snprintf(buf, n, "%d.%d", maj, min);
  } else if (!strcmp(f, "memory.total") || !strcmp(f, "memory.used") || !strcmp(f, "memory.free")) {
    if (header) {
      snprintf(buf, n, "%s [MiB]", f);
      return buf;
    }
    Memory(d, &m);
    unsigned long long v = !strcmp(f, "memory.total") ? m.total : !strcmp(f, "memory.used") ? m.used : m.free;
    snprintf(buf, n, units ? "%llu MiB" : "%llu", v >> 20);
  } else
    return NULL;
  return buf;
}

static int query(const char* fields, const char* format) {
  int header = !strstr(format, "noheader"), units = !strstr(format, "nounits");
  if (strncmp(format, "csv", 3) != 0) {
    printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n");
    return 2;
  }
  char list[1024], buf[256];
  snprintf(list, sizeof list, "%s", fields);
  char* names[32];
  int nf = 0;
  for (char* t = strtok(list, ","); t && nf < 32; t = strtok(NULL, ",")) {
    if (!field(NULL, 0, t, units, buf, sizeof buf, 1)) {
      printf("Field \"%s\" is not a valid field to query.\n\n", t);
      return 2;
    }
    names[nf++] = t;
  }
  load();
  if (header)
    for (int i = 0; i < nf; ++i)
      printf("%s%s", field(NULL, 0, names[i], units, buf, sizeof buf, 1), i + 1 < nf ? ", " : "\n");
  unsigned count = 0;
  Count(&count);
  for (unsigned g = 0; g < count; ++g) {
    dev_t_ d;
    Handle(g, &d);
    for (int i = 0; i < nf; ++i)
      printf("%s%s", field(d, g, names[i], units, buf, sizeof buf, 0), i + 1 < nf ? ", " : "\n");
  }
  return 0;
}

int main(int argc, char** argv) {
  const char *fields = NULL, *format = "csv";
  int list = 0, version = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "--query-gpu=", 12))
      fields = argv[i] + 12;
    else if (!strcmp(argv[i], "--query-gpu") && i + 1 < argc)
      fields = argv[++i];
    else if (!strncmp(argv[i], "--format=", 9))
      format = argv[i] + 9;
    else if (!strcmp(argv[i], "--format") && i + 1 < argc)
      format = argv[++i];
    else if (!strcmp(argv[i], "-L") || !strcmp(argv[i], "--list-gpus"))
      list = 1;
    else if (!strcmp(argv[i], "--version"))
      version = 1;
    else {
      printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n");
      return 2;
    }
  }
  if (fields) return query(fields, format);
  char drv[64] = "", buf[256], uuid[96];
  int cuda = 0;
  load();
  DriverVersion(drv, sizeof drv);
  CudaVersion(&cuda);
  unsigned count = 0;
  Count(&count);
  if (version) {
    snprintf(buf, sizeof buf, "%s", g_version);
    char* last = strrchr(buf, '.');
    if (last && last != strchr(buf, '.')) *last = 0;
    printf(
        "NVIDIA-SMI version  : %s\nNVML version        : %s\nDRIVER version      : %s\nCUDA Version        : "
        "%d.%d\n",
        g_version, buf, drv, cuda / 1000, cuda % 1000 / 10);
    return 0;
  }
  for (unsigned g = 0; g < count; ++g) {
    dev_t_ d;
    Handle(g, &d);
    Name(d, buf, sizeof buf);
    Uuid(d, uuid, sizeof uuid);
    if (list) printf("GPU %u: %s (UUID: %s)\n", g, buf, uuid);
  }
  if (list) return 0;
  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y", localtime(&now));
  printf("%s       \n", date);
  printf("+---------------------------------------------------------------------------------------+\n");
  printf("| NVIDIA-SMI %-22s Driver Version: %-12s CUDA Version: %d.%-6d|\n", g_version, drv, cuda / 1000,
         cuda % 1000 / 10);
  printf("|-----------------------------------------+----------------------+----------------------+\n");
  for (unsigned g = 0; g < count; ++g) {
    dev_t_ d;
    mem_t m;
    Handle(g, &d);
    Name(d, buf, sizeof buf);
    Memory(d, &m);
    char bus[64];
    bus_id(d, bus, sizeof bus);
    printf("| %3u  %-34.34s | %s Off |                    0 |\n", g, buf, bus);
    printf("| N/A   30C    P0              70W / 700W |      0MiB / %5lluMiB |      0%%      Default |\n",
           m.total >> 20);
  }
  printf("+---------------------------------------------------------------------------------------+\n");
  return 0;
}
