// NVML's C ABI as far as the watch session and the probe (native.cc: the GPU fabric state) use it: return
// codes, field and metric ids, and the structures passed by pointer, written from NVIDIA's nvml.h (the header
// of the CUDA toolkit's nvml_dev component; public copy: github.com/NVIDIA/go-nvml, gen/nvml/nvml.h,
// NVML_API_VERSION 13). No CUDA headers are needed to build gpuprep; every size below is checked at compile
// time against the LP64 layout that header implies. Private to src/sys/: the rest of gpuprep sees
// sys/nvml_session.h only.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>

namespace gp::sys::nvml {

// nvmlReturn_t.
enum Return : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNoPermission = 4,
  kNotFound = 6,
  kInsufficientSize = 7,
  kDriverNotLoaded = 9,
  kFunctionNotFound = 13,
  kGpuIsLost = 15,
  kResetRequired = 16,
  kArgumentVersionMismatch = 25,
  kUnknown = 999,
};

// nvmlSamplingType_t, nvmlClockType_t, nvmlValueType_t (the members used).
inline constexpr int kGpuUtilizationSamples = 1;
inline constexpr int kClockSm = 1;
// nvmlTemperatureSensors_t: NVML_TEMPERATURE_GPU, the GPU die.
inline constexpr int kTemperatureGpu = 0;
enum ValueType : unsigned {
  kDouble = 0,
  kUnsignedInt = 1,
  kUnsignedLong = 2,
  kUnsignedLongLong = 3,
  kSignedLongLong = 4,
  kSignedInt = 5,
  kUnsignedShort = 6,
};

// GPU health (nvml.h): NVML_FEATURE_ENABLED, NVML_PSTATE_0, the uncorrected error type and the two
// counters of nvmlDeviceGetTotalEccErrors, the double-bit cause of page retirement, the most NVLink links
// (NVML_NVLINK_MAX_LINKS: 36 in the API 13 header, 18 before; a link a board lacks answers an error).
inline constexpr unsigned kFeatureEnabled = 1;
inline constexpr unsigned kPstate0 = 0;
inline constexpr int kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0;
inline constexpr int kAggregateEcc = 1;
inline constexpr int kRetiredDoubleBitEcc = 1;
inline constexpr unsigned kNvlinkMaxLinks = 36;
// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: the driver's verdict (nvmlDeviceGpuRecoveryAction_t).
inline constexpr unsigned kFiGpuRecoveryAction = 230;
// nvmlClocksEventReason* bits (nvmlDeviceGetCurrentClocksEventReasons).
inline constexpr unsigned long long kReasonGpuIdle = 0x1;
inline constexpr unsigned long long kReasonApplicationsClocks = 0x2;
inline constexpr unsigned long long kReasonSwPowerCap = 0x4;
inline constexpr unsigned long long kReasonHwSlowdown = 0x8;
inline constexpr unsigned long long kReasonSyncBoost = 0x10;
inline constexpr unsigned long long kReasonSwThermal = 0x20;
inline constexpr unsigned long long kReasonHwThermal = 0x40;
inline constexpr unsigned long long kReasonHwPowerBrake = 0x80;

// NVML_DEVICE_ARCH_*: Hopper is 9, Blackwell 10; GPM is documented "for Hopper or newer".
inline constexpr unsigned kArchHopper = 9;
inline constexpr unsigned kArchUnknown = 0xffffffffu;

// Field ids (NVML_FI_DEV_*).
inline constexpr unsigned kFiPerfPolicyPower = 74;        // = CLOCKS_EVENT_REASON_SW_POWER_CAP, ns
inline constexpr unsigned kFiPerfPolicySyncBoost = 76;    // = CLOCKS_EVENT_REASON_SYNC_BOOST, ns
inline constexpr unsigned kFiNvlinkSpeedMbpsCommon = 90;  // "Common NVLink Speed in MBps for active links"
inline constexpr unsigned kFiNvlinkLinkCount = 91;        // "Number of NVLinks present on the device"
inline constexpr unsigned kFiNvlinkGetState = 165;        // "NVLink State - Active,Inactive"; scopeId = link
inline constexpr unsigned kFiNvlinkThroughputDataTx = 138;  // KiB, cumulative; scopeId UINT_MAX = all links
inline constexpr unsigned kFiNvlinkThroughputDataRx = 139;
inline constexpr unsigned kFiPcieCountTxBytes = 197;  // bytes, cumulative, "Value can be wrapped"
inline constexpr unsigned kFiPcieCountRxBytes = 198;
inline constexpr unsigned kFiSwThermSlowdownNs = 269;  // CLOCKS_EVENT_REASON_*, ns, cumulative
inline constexpr unsigned kFiHwThermSlowdownNs = 270;
inline constexpr unsigned kFiHwPowerBrakeSlowdownNs = 271;
inline constexpr unsigned kScopeAllLinks = UINT_MAX;

// GPM metric ids (nvmlGpmMetricId_t): percentages 0-100, rates in MiB/s.
inline constexpr unsigned kGpmSmUtil = 2;
inline constexpr unsigned kGpmSmOccupancy = 3;
inline constexpr unsigned kGpmAnyTensorUtil = 5;
inline constexpr unsigned kGpmDramBwUtil = 10;
inline constexpr unsigned kGpmPcieTxPerSec = 20;
inline constexpr unsigned kGpmPcieRxPerSec = 21;
inline constexpr unsigned kGpmNvlinkTotalRxPerSec = 60;
inline constexpr unsigned kGpmNvlinkTotalTxPerSec = 61;
// NVML_GPM_METRIC_MAX grew 98 -> 210 -> 333 across headers while NVML_GPM_METRICS_GET_VERSION stayed 1
// (go-nvml PR 184; Datadog's agent downgraded go-nvml over the resulting ABI break, datadog-agent PR 47669).
// gpuprep asks for at most kGpmOldestMax metrics and hands NVML a zeroed buffer of the largest layout.
inline constexpr unsigned kGpmOldestMax = 98;
inline constexpr unsigned kGpmLargestMax = 333;
inline constexpr unsigned kGpmMetricsGetVersion = 1;  // raw 1, not NVML_STRUCT_VERSION (go-nvml PR 176)
inline constexpr unsigned kGpmSupportVersion = 1;

union Value {
  double d;
  int si;
  unsigned ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  unsigned short us;
};

struct Sample {                   // nvmlSample_t
  unsigned long long time_stamp;  // CPU time, microseconds
  Value value;
};

struct FieldValue {  // nvmlFieldValue_t
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;  // microseconds since 1970
  long long latency_us;
  unsigned value_type;  // ValueType
  int nvml_return;      // check before reading value
  Value value;
};

struct Memory {  // nvmlMemory_t (v1: used = reserved + allocated)
  unsigned long long total, free, used;
};

struct MemoryV2 {  // nvmlMemory_v2_t
  unsigned version;
  unsigned long long total, reserved, free, used;
};
// NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | (2 << 24).
inline constexpr unsigned kMemoryV2Version = static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24);

struct PciInfo {  // nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3)
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

// nvmlProcessInfo_t as nvmlDeviceGetComputeRunningProcesses_v3 declares it (24 bytes). R535's first
// releases wrote 32-byte entries (a usedGpuCcProtectedMemory member) through the same symbol (nvitop PR 79,
// pynvml PR 48) and one later driver 16-byte ones (nvitop PR 226): the session decodes the stride it sees.
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;  // NVML_VALUE_NOT_AVAILABLE (-1) reads as ULLONG_MAX
  unsigned gpu_instance_id;            // 0xFFFFFFFF without MIG
  unsigned compute_instance_id;
};
inline constexpr size_t kLargestProcessStride = 32;

struct GpmSampleOpaque;
using GpmSample = GpmSampleOpaque*;

struct GpmMetric {  // nvmlGpmMetric_t
  unsigned metric_id;
  int nvml_return;
  double value;
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } metric_info;
};

struct GpmMetricsGet {  // nvmlGpmMetricsGet_t with the largest published metrics[] bound
  unsigned version;
  unsigned num_metrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmLargestMax];
};

struct GpmSupport {  // nvmlGpmSupport_t
  unsigned version;
  unsigned is_supported_device;
};

// GPU fabric state (nvmlGpuFabricState_t, NVML_GPU_FABRIC_STATE_*): the GPU's registration with the NVLink
// fabric that Fabric Manager sets up ("For Hopper or newer fully supported devices"; NOT_SUPPORTED
// otherwise).
inline constexpr unsigned char kFabricStateNotSupported = 0;
inline constexpr unsigned char kFabricStateNotStarted = 1;
inline constexpr unsigned char kFabricStateInProgress = 2;
inline constexpr unsigned char kFabricStateCompleted = 3;
inline constexpr size_t kFabricUuidLen = 16;  // NVML_GPU_FABRIC_UUID_LEN

struct GpuFabricInfo {  // nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo, deprecated in NVML 13)
  unsigned char cluster_uuid[kFabricUuidLen];
  int status;  // nvmlReturn_t: "Must be checked only if state returns complete"
  unsigned clique_id;
  unsigned char state;
};

struct GpuFabricInfoV3 {  // nvmlGpuFabricInfo_v3_t = nvmlGpuFabricInfoV_t (nvmlDeviceGetGpuFabricInfoV)
  unsigned version;
  unsigned char cluster_uuid[kFabricUuidLen];
  int status;
  unsigned clique_id;
  unsigned char state;
  unsigned health_mask;
  unsigned char health_summary;
};

struct GpuFabricInfoV2 {  // nvmlGpuFabricInfo_v2_t (deprecated; drivers older than the v3 layout)
  unsigned version;
  unsigned char cluster_uuid[kFabricUuidLen];
  int status;
  unsigned clique_id;
  unsigned char state;
  unsigned health_mask;
};
// nvmlGpuFabricInfo_v3 = NVML_STRUCT_VERSION(GpuFabricInfo, 3), nvmlGpuFabricInfo_v2 likewise.
inline constexpr unsigned kGpuFabricInfoV3Version =
    static_cast<unsigned>(sizeof(GpuFabricInfoV3)) | (3u << 24);
inline constexpr unsigned kGpuFabricInfoV2Version =
    static_cast<unsigned>(sizeof(GpuFabricInfoV2)) | (2u << 24);

static_assert(sizeof(GpuFabricInfo) == 28, "nvmlGpuFabricInfo_t is 28 bytes");
static_assert(sizeof(GpuFabricInfoV3) == 40 && kGpuFabricInfoV3Version == 0x03000028u,
              "nvmlGpuFabricInfo_v3 = 0x03000028");
static_assert(sizeof(GpuFabricInfoV2) == 36 && kGpuFabricInfoV2Version == 0x02000024u,
              "nvmlGpuFabricInfo_v2 = 0x02000024");
static_assert(offsetof(GpuFabricInfoV3, state) == 28, "nvmlGpuFabricInfo_v3_t.state at 28");

static_assert(sizeof(Value) == 8, "nvmlValue_t is 8 bytes");
static_assert(sizeof(Sample) == 16, "nvmlSample_t is 16 bytes");
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
static_assert(offsetof(FieldValue, value) == 32, "nvmlFieldValue_t.value at 32");
static_assert(sizeof(Memory) == 24, "nvmlMemory_t is 24 bytes");
static_assert(sizeof(MemoryV2) == 40 && kMemoryV2Version == 0x02000028u, "nvmlMemory_v2 = 0x02000028");
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t is 68 bytes");
static_assert(sizeof(ProcessInfo) == 24, "nvmlProcessInfo_t is 24 bytes");
static_assert(sizeof(GpmMetric) == 40, "nvmlGpmMetric_t is 40 bytes");
static_assert(offsetof(GpmMetricsGet, metrics) == 24, "nvmlGpmMetricsGet_t.metrics at 24");
static_assert(sizeof(GpmMetricsGet) == 24 + 40 * kGpmLargestMax, "nvmlGpmMetricsGet_t for 333 metrics");
static_assert(sizeof(GpmSupport) == 8, "nvmlGpmSupport_t is 8 bytes");

}  // namespace gp::sys::nvml
