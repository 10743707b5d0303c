// Core's device-communicator path (core/kvstore/device_comm.h, kvstore_nccl.h) with real worker
// processes: "nccl" and "dist_device_sync" on a device transport. NCCL cannot run here (no GPU),
// so the transport is the test plugin simcoll (tests/plugins/simcoll), which implements the same
// device side of the transport ABI on simdev streams and memory, enabled with
// WEFT_SIMCOLL_DEVICES; core's code is the one NCCL gets.
#include <cstdlib>

#include "dist_fixture.h"
#include "weft/kvstore.h"

namespace {

using weft_dist_test::Dist;

// The environment that makes simcoll report a device (simdev(0) of each process).
std::map<std::string, std::string> DeviceEnv(const std::string& type) {
  return {{"WEFT_SIMCOLL_DEVICES", "1"}, {"DIST_KV_TYPE", type}};
}

class DeviceDist : public Dist {
 protected:
  // Starts `n` device_comm_worker processes (ranks 0..n-1) with `args`, `env`, rendezvous `rdv`.
  void StartDeviceWorkers(int n, const std::vector<std::string>& args, std::map<std::string, std::string> env,
                          const std::string& rdv) {
    env["WEFT_NUM_WORKERS"] = std::to_string(n);
    env["WEFT_RENDEZVOUS"] = rdv;
    std::vector<std::string> argv{DEVICE_WORKER};
    argv.insert(argv.end(), args.begin(), args.end());
    for (int r = 0; r < n; ++r) {
      env["WEFT_RANK"] = std::to_string(r);
      Start(argv, env, "rank" + std::to_string(r));
    }
  }
};

TEST_F(DeviceDist, NcclValuesOnSimdevMatchTheSingleProcessStoreOnTwoWorkersUnderTheLauncher) {
  auto env = DeviceEnv("nccl");
  Start({WEFT_LAUNCH, "-n", "2", "--timeout", "60", "--rendezvous", "file", "--", DEVICE_WORKER, "values"}, env,
        "launcher");
  Wait(0, 60);
  const std::string log = Log(0);
  EXPECT_EQ(ExitCode(0), 0) << log;
  EXPECT_NE(log.find("[0] rank 0 of 2: values OK (nccl)"), std::string::npos) << log;
  EXPECT_NE(log.find("[1] rank 1 of 2: values OK (nccl)"), std::string::npos) << log;
}

TEST_F(DeviceDist, DeviceSyncOnSimdevMatchesTheSingleProcessStoreOnThreeWorkers) {
  weft::TcpStoreServer server("127.0.0.1", 0);
  auto env = DeviceEnv("dist_device_sync");
  env["WEFT_LOG_LEVEL"] = "info";
  StartDeviceWorkers(3, {"values"}, env, "tcp:127.0.0.1:" + std::to_string(server.port()));
  WaitAll(60);
  for (size_t i = 0; i < procs_.size(); ++i) {
    EXPECT_EQ(ExitCode(i), 0) << Log(i);
    EXPECT_NE(Log(i).find("values OK (dist_device_sync)"), std::string::npos) << Log(i);
    EXPECT_NE(Log(i).find("joined through the 'simcoll' device transport on simdev(0)"), std::string::npos) << Log(i);
  }
}

// Host arrays (cpu(0), cpu(1)) on the device path: the generic dist worker's MXNet numbers.
TEST_F(DeviceDist, NcclWithHostArraysGivesMxnetsNumbers) {
  StartWorkers(2, {"values"}, DeviceEnv("nccl"));
  WaitAll(60);
  for (size_t i = 0; i < procs_.size(); ++i) {
    EXPECT_EQ(ExitCode(i), 0) << Log(i);
    EXPECT_NE(Log(i).find("values OK (nccl)"), std::string::npos) << Log(i);
  }
}

// Pushes from three threads in a fixed turn, inputs ready in a different order on each rank.
TEST_F(DeviceDist, NcclIssuesCollectivesInPushOrderFromSeveralThreads) {
  StartDeviceWorkers(3, {"threads", "10"}, DeviceEnv("nccl"), "file:" + (dir_ / "rdv").string());
  WaitAll(60);
  for (size_t i = 0; i < procs_.size(); ++i) {
    EXPECT_EQ(ExitCode(i), 0) << Log(i);
    EXPECT_NE(Log(i).find("threads OK (60 pushes from 3 threads)"), std::string::npos) << Log(i);
  }
}

// A killed worker: the survivors fail at the op deadline (5 s: simcoll, like NCCL, does not see a
// closed connection), naming it. simcoll's deadline must fire before core's watchdog (deadline plus
// a tenth) aborts the communicator with a message that names no rank: at 2 s that margin was 200 ms
// of stream-thread start-up delay, thin on a loaded 2-core machine under ASan; at 5 s it is 500 ms. A survivor still
// running 30 s after the death fails the test; the latency is printed, not asserted.
TEST_F(DeviceDist, NcclKilledWorkerMakesSurvivorsFailWithinTheDeadlineNamingIt) {
  auto env = DeviceEnv("nccl");
  env["WEFT_KVSTORE_TIMEOUT"] = "5";
  StartWorkers(3, {"fault", "1", "kill", "20"}, env);
  Wait(1, 60);
  ASSERT_EQ(ExitCode(1), 128 + SIGKILL) << Log(1);
  const double died = procs_[1].exited_s;
  Wait(0, died + 30);
  Wait(2, died + 30);
  for (size_t i : {0, 2}) {
    EXPECT_EQ(ExitCode(i), 3) << Log(i);
    EXPECT_NE(Log(i).find("caught:"), std::string::npos) << Log(i);
    EXPECT_NE(Log(i).find("rank 1 sent nothing within 5000 ms"), std::string::npos) << Log(i);
    EXPECT_NE(Log(i).find("through the 'simcoll' transport"), std::string::npos) << Log(i);
    const double took = procs_[i].exited_s - died;
    std::printf("rank %zu raised %.2f s after the peer died (deadline 5 s)\n", i, took);
  }
}

// Without a device transport that reports devices (simcoll off, the nccl plugin without a GPU),
// KVStore "nccl" fails naming each transport's reason.
TEST(DeviceStore, NcclWithoutDevicesNamesWhy) {
  ::unsetenv("WEFT_SIMCOLL_DEVICES");
  try {
    weft::KVStore::Create("nccl");
    FAIL() << "KVStore nccl created without a device transport with devices";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("KVStore::Create(\"nccl\"): no device transport can run it"), std::string::npos) << m;
    EXPECT_NE(m.find("'simcoll' reports 0 usable devices: WEFT_SIMCOLL_DEVICES is 0"), std::string::npos) << m;
  }
}

}  // namespace
