// SPDX-License-Identifier: Apache-2.0
// mtier policy list | get | set NAME [KEY=VALUE...]: the tiering policies
// mtierd offers (with every tunable), the one in effect, and switching it at
// run time. `set` checks the name and parameters here first, so a typo is
// reported without a daemon; the daemon checks them again. --json prints
// each answer as one JSON object.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "client/daemon_client.h"
#include "commands.h"
#include "policy/policy.h"
#include "util/json.h"

namespace mtier::tools {
namespace {

const char kUsage[] =
    "usage: mtier policy list [--json]\n"
    "       mtier policy get [--json] [--socket PATH]\n"
    "       mtier policy set NAME [KEY=VALUE...] [--json] [--socket PATH]\n"
    "\n"
    "list  the policies and their tunables (defaults and accepted ranges)\n"
    "get   the policy mtierd runs now, with every parameter\n"
    "set   switch mtierd to policy NAME; tunables not given take their defaults\n"
    "      (needs root or mtierd's user)\n"
    "\n"
    "  --json         one JSON object: list gives \"policies\", each with \"name\",\n"
    "                 \"description\" and \"tunables\" (\"key\", \"default\", \"min\",\n"
    "                 \"max\", \"integer\", \"help\"); get and set give \"policy\" (the\n"
    "                 name), \"params\" (each parameter's value by key) and\n"
    "                 \"params_text\" (the same as KEY=VALUE words)\n"
    "  --socket PATH  the daemon's socket (default $MTIER_DAEMON_SOCKET, else\n"
    "                 /run/mtier/mtierd.sock)\n"
    "  -h, --help     this text\n"
    "\n"
    "Exit status: 0; 1 when the daemon is not reachable or refuses; 2 usage.\n";

const cli::Command kCmd("policy");

// {"policy":..., "params":{key: value...}, "params_text":...}: params_text
// is a policy's KEY=VALUE words (Policy::params_text), values numbers.
int print_policy_json(const std::string& name, const std::string& params_text) {
  json::Json params = json::Json::object();
  std::istringstream words(params_text);
  for (std::string w; words >> w;) {
    size_t eq = w.find('=');
    if (eq == std::string::npos) continue;
    params[w.substr(0, eq)] = json::number(strtod(w.c_str() + eq + 1, nullptr));
  }
  json::Json j = {{"policy", name}, {"params", std::move(params)}, {"params_text", params_text}};
  return printf("%s\n", json::dump(j).c_str()) < 0;
}

int list_json() {
  json::Json policies = json::Json::array();
  for (const policy::PolicyInfo& p : policy::policy_table()) {
    json::Json tunables = json::Json::array();
    for (const policy::Tunable& t : p.tunables)
      tunables.push_back({{"key", t.key},
                          {"default", json::number(t.default_value)},
                          {"min", json::number(t.min)},
                          {"max", json::number(t.max)},
                          {"integer", t.integer},
                          {"help", t.help}});
    policies.push_back({{"name", p.name}, {"description", p.description}, {"tunables", std::move(tunables)}});
  }
  return printf("%s\n", json::dump({{"policies", std::move(policies)}}).c_str()) < 0;
}

int list(bool as_json) {
  if (as_json) return list_json();
  for (const policy::PolicyInfo& p : policy::policy_table()) {
    printf("%s: %s\n", p.name, p.description);
    for (const policy::Tunable& t : p.tunables)
      printf("  %-16s default %-8s (%s) %s\n", t.key, policy::default_text(t).c_str(),
             policy::range_text(t).c_str(), t.help);
  }
  return 0;
}

int get(const std::string& path, bool as_json) {
  ipc::Reply reply;
  std::string why;
  if (daemon_request(path, ipc::Message{ipc::StatusRequest{0, ""}}, &reply, &why) < 0 ||
      (reply.status < 0 && reply.status != -ESRCH)) {
    return kCmd.fail(why.empty() ? reply.message : why);
  }
  json::Json v;
  if (json::parse(reply.message, &v, &why) < 0)
    return kCmd.fail("mtierd's reply does not parse (" + why + ")");
  const json::Json& d = json::at(v, "daemon");
  if (as_json) return print_policy_json(json::str(d, "policy"), json::str(d, "policy_params"));
  printf("%s %s\n", json::str(d, "policy").c_str(), json::str(d, "policy_params").c_str());
  return 0;
}

int set(const std::string& path, const std::string& name, const std::string& params, bool as_json) {
  std::unique_ptr<policy::Policy> p;
  std::string why;
  if (policy::make_policy(name, params, &p, &why) < 0) return kCmd.usage_error(why);
  ipc::Reply reply;
  if (daemon_request(path, ipc::Message{ipc::PolicySet{name, params}}, &reply, &why) < 0)
    return kCmd.fail(why);
  if (reply.status < 0) return kCmd.fail("mtierd refused: " + reply.message);
  // mtierd made the policy from the same name and words with the same
  // make_policy: the one made here has its parameters, defaults filled in.
  if (as_json) return print_policy_json(p->name(), p->params_text());
  printf("%s\n", reply.message.c_str());
  return 0;
}

}  // namespace

int cmd_policy(int argc, char** argv) {
  std::string socket;
  bool as_json = false;
  std::vector<std::string> words;  // the verb and its words; flags may come anywhere
  cli::Parser p(kCmd, [](FILE* out) { fputs(kUsage, out); });
  p.text("--socket", &socket).flag("--json", &as_json);
  if (int rc = p.parse(argc, argv, &words); rc >= 0) return rc;
  if (words.empty()) return kCmd.usage_error("list, get or set?");
  const std::string& verb = words[0];
  std::string path = daemon_socket_path(socket.empty() ? nullptr : socket.c_str());
  if (verb == "list")
    return words.size() == 1 ? list(as_json) : kCmd.usage_error("list takes no arguments");
  if (verb == "get")
    return words.size() == 1 ? get(path, as_json) : kCmd.usage_error("get takes no arguments");
  if (verb != "set") return kCmd.usage_error("unknown subcommand '" + verb + "' (list, get or set)");
  if (words.size() < 2) return kCmd.usage_error("set needs a policy name");
  std::string params;
  for (size_t i = 2; i < words.size(); i++) {
    if (words[i].find('=') == std::string::npos)
      return kCmd.usage_error("'" + words[i] + "' is not KEY=VALUE");
    params += (params.empty() ? "" : " ") + words[i];
  }
  return set(path, words[1], params, as_json);
}

}  // namespace mtier::tools
