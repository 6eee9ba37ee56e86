// jsonReport(): weft-info --json. Keys are snake_case and kept in the order written; absent facts are null,
// never left out, so that scripts can rely on the shape.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>

#include "core/info/info_report.h"

namespace weft::info {
namespace {

using Json = nlohmann::ordered_json;

Json textOrNull(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

Json linkOrNull(float gbps) { return gbps > 0 ? Json(static_cast<double>(gbps)) : Json(nullptr); }

// A JSON array of toJson(item) for every item.
template <typename Item, typename ToJson>
Json arrayOf(const std::vector<Item>& items, ToJson toJson) {
  Json array = Json::array();
  std::transform(items.begin(), items.end(), std::back_inserter(array), toJson);
  return array;
}

Json plugin(const PluginReport& p) {
  Json properties = nullptr;
  if (p.loaded && !p.reach.empty()) {
    properties = {{"reach", p.reach},
                  {"latency_us", p.latencyUs},
                  {"bandwidth_gbps", p.bandwidthGBps},
                  {"offers_backend", p.offersBackend}};
  }
  return {{"name", p.name},
          {"file", textOrNull(p.file)},
          {"loaded", p.loaded},
          {"reason", textOrNull(p.reason)},
          {"abi_version", p.abiVersion == 0 ? Json(nullptr) : Json(p.abiVersion)},
          {"kind", textOrNull(p.kind)},
          {"shadowed_by", textOrNull(p.shadowedBy)},
          {"extensions", p.extensions},
          {"properties", properties}};
}

Json numaNode(const topology::NumaNode& n) {
  return {{"os_index", n.osIndex}, {"memory_bytes", n.memoryBytes}, {"cpus", n.cpus}};
}

Json cacheGroup(const topology::CacheGroup& c) {
  return {{"level", c.level}, {"type", c.type}, {"size_bytes", c.sizeBytes}, {"count", c.count}};
}

Json networkDevice(const topology::NetworkDevice& d) {
  return {{"name", d.name},
          {"kind", d.kind},
          {"pci_bus_id", textOrNull(d.pciBusId)},
          {"pcie_link_gbps", linkOrNull(d.pcieLinkGBps)},
          {"numa_nodes", d.numaNodes}};
}

Json accelerator(const topology::Accelerator& a) {
  return {{"names", a.names},
          {"kind", a.kind},
          {"pci_bus_id", textOrNull(a.pciBusId)},
          {"pci_ids", a.pciBusId.empty() ? Json(nullptr) : Json(topology::pciIds(a))},
          {"vendor", textOrNull(a.vendor)},
          {"model", textOrNull(a.model)},
          {"pcie_link_gbps", linkOrNull(a.pcieLinkGBps)},
          {"numa_nodes", a.numaNodes}};
}

Json topologyJson(const topology::HostTopology& t) {
  const topology::CpuBinding& b = t.processBinding;
  return {{"known", t.known},
          {"unknown_reason", textOrNull(t.unknownReason)},
          {"hwloc_api_version", t.hwlocApiVersion},
          {"packages", t.packages},
          {"cores", t.cores},
          {"pus", t.pus},
          {"memory_bytes", t.memoryBytes},
          {"numa_nodes", arrayOf(t.numaNodes, numaNode)},
          {"caches", arrayOf(t.caches, cacheGroup)},
          {"network_devices", arrayOf(t.networkDevices, networkDevice)},
          {"accelerators", arrayOf(t.accelerators, accelerator)},
          {"process_binding",
           {{"known", b.known},
            {"cpus", textOrNull(b.cpus)},
            {"allowed_cpus", textOrNull(b.allowedCpus)},
            {"bound", b.narrowerThanAllowed},
            {"numa_nodes", b.numaNodes}}}};
}

Json setting(const SettingReport& s) {
  return {{"name", s.name},
          {"set", s.value.has_value()},
          {"value", s.value ? Json(s.value->text) : Json(nullptr)},
          {"source", s.value ? Json(config::sourceName(s.value->source)) : Json(nullptr)},
          {"description", textOrNull(s.description)}};
}

}  // namespace

std::string jsonReport(const InfoReport& report) {
  Json json = {{"version", {{"text", report.version}, {"code", report.versionCode}}},
               {"library", report.library},
               {"plugin_search_path", report.pluginSearchPath},
               {"plugins", arrayOf(report.plugins, plugin)},
               {"topology", topologyJson(report.topology)},
               {"settings", arrayOf(report.settings, setting)},
               {"unrecognised_settings", arrayOf(report.unrecognised, setting)}};
  // Environment values and file names need not be UTF-8: replace bad bytes rather than fail.
  return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace weft::info
