// SPDX-License-Identifier: Apache-2.0
// mtierd: the node daemon. Parses the command line and the config file,
// then serves (server.h) until SIGTERM. Exit status: 0 stopped cleanly or
// an action (--help, --check-config) succeeded; 1 a failure; 2 usage.
// No exception ends it without a word: the loop contains those of each
// event (server.h); one from start-up or teardown is logged, exit status 1.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli.h"
#include "daemon_config.h"
#include "log/log.h"
#include "server.h"

namespace {

int run(int argc, char** argv) {
  using namespace mtier::daemon;
  mtier::log::set_ident("mtierd");
  CliResult cli;
  std::string why;
  if (parse_cli(argc, argv, &cli, &why) < 0 || cli.action == CliAction::kUsageError) {
    fprintf(stderr, "mtierd: %s\nTry 'mtierd --help'.\n", why.c_str());
    return 2;
  }
  if (cli.action == CliAction::kHelp || cli.action == CliAction::kVersion) {
    fputs(cli.text.c_str(), stdout);
    return 0;
  }
  if (cli.action == CliAction::kCheckConfig) {
    std::string message;
    int rc = check_config(cli, &message);
    fprintf(rc < 0 ? stderr : stdout, "%s\n", message.c_str());
    return rc < 0 ? 1 : 0;
  }
  DaemonConfig cfg;
  if (load_config(cli, &cfg, &why) < 0) {
    fprintf(stderr, "mtierd: %s\n", why.c_str());
    return 1;
  }
  bool usage = false;
  if (check_policy(cli, cfg, &why, &usage) < 0) {
    fprintf(stderr, "mtierd: %s\n%s", why.c_str(), usage ? "Try 'mtierd --help'.\n" : "");
    return usage ? 2 : 1;
  }
  mtier::log::set_level(cfg.log_level);
  MTIER_LOG_INFO("configuration:\n%s", describe_config(cfg).c_str());
  Server server(cfg, cli);
  if (server.start(&why) < 0) {
    MTIER_LOG_ERROR("%s", why.c_str());
    return 1;
  }
  return server.run();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    MTIER_LOG_ERROR("out of memory (std::bad_alloc); stopping");
  } catch (const std::exception& e) {
    MTIER_LOG_ERROR("%s; stopping", e.what());
  } catch (...) {
    MTIER_LOG_ERROR("an unknown exception; stopping");
  }
  return 1;
}
