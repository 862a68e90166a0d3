// SPDX-License-Identifier: Apache-2.0
// The mtier command's subcommands: each returns the process exit status
// (0 ok, 1 failure, 2 usage error) and prints its own --help.
#pragma once

namespace mtier::tools {

int cmd_demo(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_status(int argc, char** argv);
int cmd_policy(int argc, char** argv);
int cmd_heat(int argc, char** argv);
int cmd_record(int argc, char** argv);
int cmd_report(int argc, char** argv);

}  // namespace mtier::tools
