// Discovery on a GPU node this machine is not: hwloc reads tests/topology/data/h100_node.xml (HWLOC_XMLFILE,
// set before the first use of hwloc in this process). The file is `lstopo-no-graphics --of xml --whole-io`
// (Debian's hwloc 2.9) on an H100 VM, 2026-11-27: the GPU is PCI function 0000:00:06.0, a 3D controller
// (10de:2330) with no OS device, and its OpenCL device opencl1d0 hangs off the host bridge instead. One
// thing is added by hand: a BMC's VGA (ASPEED, 1a03:2000) at 0000:00:07.0 with a DRM card0, as servers have.
#include <gtest/gtest.h>

#include <cstdlib>

#include "topology/topology.h"

namespace weft::topology {
namespace {

const Accelerator* onBus(const HostTopology& t, const std::string& busId) {
  for (const Accelerator& a : t.accelerators) {
    if (a.pciBusId == busId) return &a;
  }
  return nullptr;
}

TEST(GpuNodeFixture, TheGpuIsOnPciWithItsOpenClDevice) {
  HostTopology t = hostTopology();
  ASSERT_TRUE(t.known) << t.unknownReason;
  ASSERT_EQ(t.accelerators.size(), 2U) << describe(t);
  const Accelerator* gpu = onBus(t, "0000:00:06.0");
  ASSERT_NE(gpu, nullptr) << describe(t);
  EXPECT_EQ(gpu->kind, "gpu");
  EXPECT_EQ(pciIds(*gpu), "10de:2330");
  EXPECT_EQ(gpu->names, std::vector<std::string>{"opencl1d0"});
  EXPECT_EQ(gpu->model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu->vendor, "NVIDIA Corporation");
  EXPECT_GT(gpu->pcieLinkGBps, 60.0F);
  EXPECT_EQ(gpu->numaNodes, std::vector<unsigned>{0});
  EXPECT_EQ(t.cores, 16);  // the recorded machine's, not this one's
  EXPECT_NE(describe(t).find("gpu opencl1d0 (NVIDIA H100 80GB HBM3): PCI 0000:00:06.0 [10de:2330], link 63 GB/s"),
            std::string::npos)
      << describe(t);
}

TEST(GpuNodeFixture, AnotherVendorsVgaKeepsItsDrmCard) {
  HostTopology t = hostTopology();
  const Accelerator* vga = onBus(t, "0000:00:07.0");
  ASSERT_NE(vga, nullptr) << describe(t);
  EXPECT_EQ(vga->kind, "gpu");
  EXPECT_EQ(vga->names, std::vector<std::string>{"card0"});
  EXPECT_TRUE(vga->model.empty());
}

}  // namespace
}  // namespace weft::topology

int main(int argc, char** argv) {
  setenv("HWLOC_XMLFILE", WEFT_GPU_NODE_XML, 1);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
