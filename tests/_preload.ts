/**
 * Loaded before every test file (bunfig.toml `preload`): glide's own logger off, so refusals the
 * suites provoke on purpose do not print a `WARN logger_core` line each.
 */
import { Logger } from "@valkey/valkey-glide";

Logger.setLoggerConfig("off");
