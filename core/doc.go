// Package core is rocelab's foundation floor: what every model (wire,
// topologies, switchmodel, endpoint, faults) and both drivers share, with no
// I/O of its own.
//
//   - core/clock: fabric time in integer picoseconds, line rates, and the
//     small Scheduler interface a model asks for future callbacks through;
//   - core/units: the one grammar for sizes, rates and durations (400Gb/s,
//     64KiB, 1.5us) every file, flag and spec reads, and the one way sizes and
//     rates are printed for people ("2.74 MB", "400 Gb/s");
//   - core/sim: the discrete-event engine (virtual time, deterministic tie
//     breaking, seeded random streams), which the simulator runs to the end
//     and the emulation's wall-clock loop drives in dilated real time;
//   - core/telemetry: the one interface through which every model exposes its
//     counters and gauges to stats, Prometheus, reports and expectations;
//   - core/fct: completion-time distributions, as both drivers summarise and
//     merge the FCTs of perf flows;
//   - core/seqtab: values under numbers handed out in sequence (QP numbers,
//     memory keys' index, work request IDs);
//   - core/slide: a queue consumed from its front that keeps to one array.
package core
