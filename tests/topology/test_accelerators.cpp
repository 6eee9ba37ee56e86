// The rules that turn hwloc's PCI functions and OS devices into accelerators (topology/accelerators.h),
// on hand-made devices: the machines that need them (GPU nodes) are not here.
#include <gtest/gtest.h>

#include "topology/accelerators.h"

namespace weft::topology {
namespace {

Accelerator onPci(const char* busId, uint16_t vendor, const char* kind = "gpu") {
  Accelerator a;
  a.kind = kind;
  a.pciBusId = busId;
  a.pciVendor = vendor;
  a.pciDevice = 0x2330;
  return a;
}

Accelerator openCl(const char* name, const char* vendor, const char* model) {
  Accelerator a;
  a.kind = "coprocessor";
  a.names = {name};
  a.vendor = vendor;
  a.model = model;
  return a;
}

TEST(Accelerators, PciClassGivesTheKind) {
  EXPECT_STREQ(acceleratorKindOfPciClass(0x0300), "gpu");  // VGA
  EXPECT_STREQ(acceleratorKindOfPciClass(0x0302), "gpu");  // 3D controller (NVIDIA data-centre GPUs)
  EXPECT_STREQ(acceleratorKindOfPciClass(0x0380), "gpu");
  EXPECT_STREQ(acceleratorKindOfPciClass(0x1200), "coprocessor");
  EXPECT_EQ(acceleratorKindOfPciClass(0x0200), nullptr);  // Ethernet
  EXPECT_EQ(acceleratorKindOfPciClass(0x0b40), nullptr);  // co-processor CPUs: hwloc names them if they matter
  EXPECT_EQ(acceleratorKindOfPciClass(0x0000), nullptr);
}

// What an H100 node with Debian's hwloc shows: the PCI function and an OpenCL device off PCI.
TEST(Accelerators, TheOnlyGpuOfAVendorTakesItsUnplacedDevice) {
  std::vector<Accelerator> accelerators = {onPci("0000:00:02.0", 0x1a03), onPci("0000:00:06.0", 0x10de)};
  joinUnplacedDevices(accelerators, {openCl("opencl1d0", "NVIDIA Corporation", "NVIDIA H100 80GB HBM3")});
  ASSERT_EQ(accelerators.size(), 2U);
  EXPECT_TRUE(accelerators[0].names.empty());  // the BMC's VGA (ASPEED) is not NVIDIA's
  EXPECT_EQ(accelerators[1].names, std::vector<std::string>{"opencl1d0"});
  EXPECT_EQ(accelerators[1].model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(accelerators[1].vendor, "NVIDIA Corporation");
  EXPECT_EQ(accelerators[1].kind, "gpu");  // the PCI class says GPU; OpenCL's "co-processor" does not override
}

TEST(Accelerators, AModelAlreadyKnownStays) {
  std::vector<Accelerator> accelerators = {onPci("0000:00:06.0", 0x1002)};
  accelerators[0].model = "from an OS device on PCI";
  joinUnplacedDevices(accelerators, {openCl("opencl0d0", "Advanced Micro Devices, Inc.", "gfx942")});
  ASSERT_EQ(accelerators.size(), 1U);
  EXPECT_EQ(accelerators[0].names, std::vector<std::string>{"opencl0d0"});
  EXPECT_EQ(accelerators[0].model, "from an OS device on PCI");
}

// Eight GPUs and eight OpenCL devices: the order of one need not be the order of the other.
TEST(Accelerators, SeveralGpusOfTheVendorLeaveTheDeviceApart) {
  std::vector<Accelerator> accelerators = {onPci("0000:18:00.0", 0x10de), onPci("0000:3b:00.0", 0x10de)};
  joinUnplacedDevices(accelerators, {openCl("opencl0d0", "NVIDIA Corporation", "H100")});
  ASSERT_EQ(accelerators.size(), 3U);
  EXPECT_TRUE(accelerators[0].names.empty());
  EXPECT_TRUE(accelerators[1].names.empty());
  EXPECT_EQ(accelerators[2].names, std::vector<std::string>{"opencl0d0"});
  EXPECT_TRUE(accelerators[2].pciBusId.empty());
}

TEST(Accelerators, NoGpuOfTheVendorOrNoVendorLeavesTheDeviceApart) {
  std::vector<Accelerator> accelerators = {onPci("0000:00:06.0", 0x10de)};
  joinUnplacedDevices(accelerators, {openCl("opencl0d0", "Intel(R) Corporation", "Arc"), openCl("x", "", "?")});
  ASSERT_EQ(accelerators.size(), 3U);
  EXPECT_TRUE(accelerators[0].names.empty());
  EXPECT_EQ(accelerators[1].names, std::vector<std::string>{"opencl0d0"});
  EXPECT_EQ(accelerators[2].names, std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace weft::topology
