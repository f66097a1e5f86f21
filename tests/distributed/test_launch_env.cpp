// Launch-environment detection: torchrun, accelerate, MPI flavours, Slurm, nodelist parsing.
#include <gtest/gtest.h>

#include "lerobot/common/error.h"
#include "lerobot/distributed/launch_env.h"

using namespace lerobot;

TEST(LaunchEnv, NothingSetIsSingleProcess) {
  auto e = detect_launch_env(EnvMap{{"HOME", "/root"}});
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.local_world_size, 1);
  EXPECT_EQ(e.launcher, "none");
  EXPECT_FALSE(e.distributed());
  EXPECT_TRUE(e.is_main_process());
}

TEST(LaunchEnv, Torchrun) {
  EnvMap env{{"RANK", "5"},        {"WORLD_SIZE", "8"},  {"LOCAL_RANK", "1"},
             {"LOCAL_WORLD_SIZE", "4"}, {"GROUP_RANK", "1"}, {"GROUP_WORLD_SIZE", "2"},
             {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "29511"},
             {"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "2"},
             {"TORCHELASTIC_RUN_ID", "abc"}};
  auto e = detect_launch_env(env);
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 4);
  EXPECT_EQ(e.node_rank, 1);
  EXPECT_EQ(e.num_nodes, 2);
  EXPECT_EQ(e.master_addr, "10.1.2.3");
  EXPECT_EQ(e.master_port, 29511);
  EXPECT_TRUE(e.use_agent_store);
  EXPECT_EQ(e.restart_count, 2);
  EXPECT_FALSE(e.is_main_process());
}

TEST(LaunchEnv, AgentStoreOnlyWhenTrue) {
  EnvMap env{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "False"}};
  EXPECT_FALSE(detect_launch_env(env).use_agent_store);
  env.erase("TORCHELASTIC_USE_AGENT_STORE");
  EXPECT_FALSE(detect_launch_env(env).use_agent_store);
}

TEST(LaunchEnv, TorchrunDerivesMissingLocalFields) {
  auto e = detect_launch_env(EnvMap{{"RANK", "3"}, {"WORLD_SIZE", "4"}});
  EXPECT_EQ(e.local_world_size, 4);
  EXPECT_EQ(e.local_rank, 3);
  EXPECT_EQ(e.num_nodes, 1);
  EXPECT_EQ(e.master_addr, "127.0.0.1");
  EXPECT_EQ(e.master_port, 29500);
}

TEST(LaunchEnv, AccelerateSingleProcessHasNoRank) {
  auto e = detect_launch_env(EnvMap{{"ACCELERATE_MIXED_PRECISION", "bf16"}});
  EXPECT_EQ(e.launcher, "accelerate");
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
}

TEST(LaunchEnv, AccelerateMultiProcessUsesTorchrunVariables) {
  auto e = detect_launch_env(EnvMap{{"ACCELERATE_MIXED_PRECISION", "no"}, {"RANK", "1"},
                                    {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"},
                                    {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_PORT", "1234"}});
  EXPECT_EQ(e.launcher, "accelerate");
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.world_size, 2);
  EXPECT_EQ(e.master_port, 1234);
}

TEST(LaunchEnv, OurLauncherNamesItself) {
  auto e = detect_launch_env(EnvMap{{"RANK", "0"}, {"WORLD_SIZE", "2"},
                                    {"LEROBOT_LAUNCHER", "lerobot-cpp"}});
  EXPECT_EQ(e.launcher, "lerobot-cpp");
}

TEST(LaunchEnv, OpenMpi) {
  auto e = detect_launch_env(EnvMap{{"OMPI_COMM_WORLD_RANK", "6"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                    {"MASTER_ADDR", "head"}});
  EXPECT_EQ(e.launcher, "openmpi");
  EXPECT_EQ(e.rank, 6);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 2);
  EXPECT_EQ(e.local_world_size, 4);
  EXPECT_EQ(e.node_rank, 1);
  EXPECT_EQ(e.num_nodes, 2);
  EXPECT_EQ(e.master_addr, "head");
}

TEST(LaunchEnv, MultiNodeMpiWithoutMasterAddrLeavesItUnknown) {
  auto e = detect_launch_env(EnvMap{{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_EQ(e.master_addr, "");
  auto single = detect_launch_env(EnvMap{{"OMPI_COMM_WORLD_RANK", "1"},
                                         {"OMPI_COMM_WORLD_SIZE", "2"},
                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_EQ(single.master_addr, "127.0.0.1");
}

TEST(LaunchEnv, MpichAndIntelMpi) {
  auto e = detect_launch_env(EnvMap{{"PMI_RANK", "3"}, {"PMI_SIZE", "4"},
                                    {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"},
                                    {"SLURM_JOB_NODELIST", "cn[7-8]"}});
  EXPECT_EQ(e.launcher, "mpich");
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.node_rank, 1);
  EXPECT_EQ(e.master_addr, "cn7");  // mpirun inside a Slurm allocation
}

TEST(LaunchEnv, Mvapich) {
  auto e = detect_launch_env(EnvMap{{"MV2_COMM_WORLD_RANK", "2"}, {"MV2_COMM_WORLD_SIZE", "3"},
                                    {"MV2_COMM_WORLD_LOCAL_RANK", "2"}});
  EXPECT_EQ(e.launcher, "mvapich");
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.world_size, 3);
  EXPECT_EQ(e.local_rank, 2);
  EXPECT_EQ(e.local_world_size, 3);
}

TEST(LaunchEnv, ResolutionOrderTorchrunBeforeMpiBeforeSlurm) {
  EnvMap env{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "0"},
             {"OMPI_COMM_WORLD_SIZE", "4"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}};
  EXPECT_EQ(detect_launch_env(env).launcher, "torchrun");
  env.erase("RANK");
  env.erase("WORLD_SIZE");
  EXPECT_EQ(detect_launch_env(env).launcher, "openmpi");
  env.erase("OMPI_COMM_WORLD_RANK");
  env.erase("OMPI_COMM_WORLD_SIZE");
  auto e = detect_launch_env(env);
  EXPECT_EQ(e.launcher, "slurm");
  EXPECT_EQ(e.rank, 3);
}

TEST(LaunchEnv, Slurm) {
  EnvMap env{{"SLURM_PROCID", "9"},         {"SLURM_NTASKS", "16"},
             {"SLURM_LOCALID", "1"},        {"SLURM_NODEID", "1"},
             {"SLURM_NNODES", "2"},         {"SLURM_NTASKS_PER_NODE", "8(x2)"},
             {"SLURM_JOB_NODELIST", "gpu[01-04,07]"}, {"SLURM_JOB_ID", "123456"}};
  auto e = detect_launch_env(env);
  EXPECT_EQ(e.launcher, "slurm");
  EXPECT_EQ(e.rank, 9);
  EXPECT_EQ(e.world_size, 16);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 8);
  EXPECT_EQ(e.node_rank, 1);
  EXPECT_EQ(e.num_nodes, 2);
  EXPECT_EQ(e.master_addr, "gpu01");
  EXPECT_EQ(e.master_port, 10000 + 123456 % 20000);
  env["MASTER_PORT"] = "4242";
  env["MASTER_ADDR"] = "override";
  e = detect_launch_env(env);
  EXPECT_EQ(e.master_port, 4242);
  EXPECT_EQ(e.master_addr, "override");
}

TEST(LaunchEnv, SlurmHeterogeneousTasksPerNode) {
  EnvMap env{{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "5"}, {"SLURM_LOCALID", "0"},
             {"SLURM_NODEID", "2"}, {"SLURM_NNODES", "3"}, {"SLURM_TASKS_PER_NODE", "2(x2),1"},
             {"SLURM_NODELIST", "node1,node2,node3"}, {"SLURM_JOBID", "7"}};
  auto e = detect_launch_env(env);
  EXPECT_EQ(e.local_world_size, 1);
  EXPECT_EQ(e.master_addr, "node1");
  EXPECT_EQ(e.master_port, 10007);
}

TEST(LaunchEnv, PlainMasterVariables) {
  auto e = detect_launch_env(EnvMap{{"MASTER_ADDR", "h"}, {"MASTER_PORT", "5000"}});
  EXPECT_EQ(e.launcher, "env");
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.master_addr, "h");
  EXPECT_EQ(e.master_port, 5000);
}

TEST(LaunchEnv, MalformedValuesAreUsageErrorsNamingTheVariable) {
  try {
    detect_launch_env(EnvMap{{"RANK", "one"}, {"WORLD_SIZE", "2"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_EQ(e.where(), "RANK");
  }
  EXPECT_THROW(detect_launch_env(EnvMap{{"RANK", "2"}, {"WORLD_SIZE", "2"}}), Error);
  EXPECT_THROW(detect_launch_env(EnvMap{{"RANK", "0"}, {"WORLD_SIZE", "0"}}), Error);
  EXPECT_THROW(detect_launch_env(EnvMap{{"WORLD_SIZE", "2"}}), Error);
  EXPECT_THROW(detect_launch_env(EnvMap{{"MASTER_PORT", "70000"}}), Error);
  EXPECT_THROW(detect_launch_env(EnvMap{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"},
                                        {"LOCAL_WORLD_SIZE", "2"}}),
               Error);
}

TEST(SlurmNodelist, Expansion) {
  using V = std::vector<std::string>;
  EXPECT_EQ(expand_slurm_nodelist("gpu[01-04,07]"), (V{"gpu01", "gpu02", "gpu03", "gpu04", "gpu07"}));
  EXPECT_EQ(expand_slurm_nodelist("node1,node2"), (V{"node1", "node2"}));
  EXPECT_EQ(expand_slurm_nodelist("single"), (V{"single"}));
  EXPECT_EQ(expand_slurm_nodelist("n[8-10]"), (V{"n8", "n9", "n10"}));
  EXPECT_EQ(expand_slurm_nodelist("n[098-100]"), (V{"n098", "n099", "n100"}));
  EXPECT_EQ(expand_slurm_nodelist("a[1-2],b[5],c"), (V{"a1", "a2", "b5", "c"}));
  EXPECT_EQ(expand_slurm_nodelist("r[1-2]-n[1-2]"), (V{"r1-n1", "r1-n2", "r2-n1", "r2-n2"}));
  EXPECT_EQ(expand_slurm_nodelist("x[3]y"), (V{"x3y"}));
  EXPECT_EQ(expand_slurm_nodelist(""), V{});
  EXPECT_EQ(expand_slurm_nodelist("node-1.cluster,node-2.cluster").front(), "node-1.cluster");
}

TEST(SlurmNodelist, Malformed) {
  for (const char* bad : {"gpu[01-04", "gpu01]", "gpu[]", "gpu[4-1]", "gpu[a-b]", "g[1-2", "g[[1]]"})
    EXPECT_THROW(expand_slurm_nodelist(bad), Error) << bad;
}

TEST(SlurmTasksPerNode, Parse) {
  EXPECT_EQ(parse_slurm_tasks_per_node("8"), (std::vector<int>{8}));
  EXPECT_EQ(parse_slurm_tasks_per_node("8(x2)"), (std::vector<int>{8, 8}));
  EXPECT_EQ(parse_slurm_tasks_per_node("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_THROW(parse_slurm_tasks_per_node("8(y2)"), Error);
}

TEST(SlurmPort, StaysInRangeAndIsDeterministic) {
  EXPECT_EQ(slurm_port_from_job_id(0), 10000);
  EXPECT_EQ(slurm_port_from_job_id(19999), 29999);
  EXPECT_EQ(slurm_port_from_job_id(20000), 10000);
  EXPECT_EQ(slurm_port_from_job_id(123456), slurm_port_from_job_id(123456));
}
