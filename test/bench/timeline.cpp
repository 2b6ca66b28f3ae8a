// timeline: where each multiprocessor's time goes in a queue of compute-backend filters. Builds
// fft_line.comp with TIMELINE (every workgroup appends its multiprocessor, its dispatch's kind and
// the clock at its start and end to a storage buffer; NVIDIA's GL_NV_shader_thread_group and
// GL_ARB_shader_clock), queues filters back to back as fftcompare's queued figure does, and
// prints, per dispatch kind, the workgroups a filter and their durations, and, per
// multiprocessor, the time it held no workgroup, split by the kinds on either side of each gap;
// then one time line (each multiprocessor's clock is its own, aligned on the filters) with each
// kind's start and end within a filter and the workgroups resident through one filter.
// Usage:
//   timeline SIZE [QUEUE [CSV]]     SIZE as fftcompare's (1920x1080); QUEUE filters (default 20);
//                                    CSV: every record (kind, sm, workgroup, start, end) to a file
//   timeline FILE.csv QUEUE MHZ      the same from such a file, the clock at MHZ
#include "app/cli.h"
#include "base/parse.h"
#include "fft/compute_fft.h"
#include "fft/filter.h"
#include "gl/buffer.h"
#include "gl/context.h"
#include "gl/program.h"
#include "gl/timer.h"
#include "probes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <vector>

using namespace gpufft;

namespace {

constexpr GLuint kBinding = 7;

struct Record {
    unsigned kind = 0, sm = 0, group = 0;
    std::uint64_t start = 0, end = 0;
};

std::string kind_name(unsigned kind) {
    static const char* transforms[] = {"?", "forward", "inverse", "filter"};
    std::string name = (kind & 3u) == 1 ? "rows " : "columns ";
    name += transforms[(kind >> 2) & 3u];
    if (kind & 16u) name += " pair 0";
    if (kind & 32u) name += " tail";
    const unsigned step = (kind >> 6) & 3u;
    if (step == 1) name += " step A";
    if (step == 2) name += " step B";
    return name;
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc < 2) throw UsageError("usage: timeline SIZE [QUEUE [CSV]]");
        const std::string size = argv[1];
        const int queue = argc > 2 ? parse_int(argv[2], "queue", 1, 10000) : 20;
        std::vector<Record> all;
        double elapsed_ms = 0;
        std::string gl = "a record file";
        unsigned count = 0;
        const bool csv_in = size.size() > 4 && size.compare(size.size() - 4, 4, ".csv") == 0;
        if (csv_in) {
            // Offline: a CSV this tool wrote, its QUEUE, and the clock's MHz for the queue's time.
            if (argc < 4) throw UsageError("usage: timeline FILE.csv QUEUE MHZ");
            const double mhz = parse_double(argv[3], "MHz", 1, 1e5);
            std::map<std::string, unsigned> kinds;
            for (unsigned k = 0; k < 256; ++k) kinds.emplace(kind_name(k), k);
            FILE* in = std::fopen(size.c_str(), "r");
            if (!in) throw Error(size + ": cannot read");
            char line[256];
            std::uint64_t first = UINT64_MAX, last = 0;
            while (std::fgets(line, sizeof line, in)) {
                char name[64];
                unsigned sm = 0, group = 0;
                unsigned long long a = 0, b = 0;
                if (std::sscanf(line, "%63[^,],%u,%u,%llu,%llu", name, &sm, &group, &a, &b) != 5 || !kinds.count(name)) continue;
                all.push_back({kinds[name], sm, group, a, b});
                first = std::min<std::uint64_t>(first, a);
                last = std::max<std::uint64_t>(last, b);
            }
            std::fclose(in);
            count = static_cast<unsigned>(all.size());
            // The span of one multiprocessor's clock stands for the queue's time.
            std::map<unsigned, std::pair<std::uint64_t, std::uint64_t>> spans;
            for (const Record& r : all) {
                auto it = spans.emplace(r.sm, std::make_pair(r.start, r.end)).first;
                it->second = {std::min(it->second.first, r.start), std::max(it->second.second, r.end)};
            }
            std::vector<double> ms;
            for (const auto& [sm, se] : spans) ms.push_back(static_cast<double>(se.second - se.first) / (mhz * 1000.0));
            elapsed_ms = median(ms);
        } else {
            const size_t x = size.find('x');
            const int m = parse_int(size.substr(0, x), "width", 4, 65536);
            const int n = x == std::string::npos ? m : parse_int(size.substr(x + 1), "height", 4, 65536);
            setenv("GPUFFT_TIMELINE", std::to_string(kBinding).c_str(), 1);

            HeadlessContext context;
            gl = describe_gl();
            ProgramCache programs;
            FftOptions options;
            options.backend = Backend::Compute;
            std::unique_ptr<Fft2D> fft = make_fft(programs, m, n, options);
            Filter filter(*fft, bench::random_values(static_cast<size_t>(m) * static_cast<size_t>(n) * 4, 77u));
            const std::vector<float> image = bench::random_values(static_cast<size_t>(m) * static_cast<size_t>(n) * 4, 1000u);
            fft->input().upload(image.data());

            // Room for every workgroup of the queue: a filter's dispatches have at most a few
            // workgroups a line, or (the four-step steps) a few a 128 elements; 8 uints a record.
            const size_t records = static_cast<size_t>(queue + 1) *
                                   std::max((static_cast<size_t>(m) + static_cast<size_t>(n)) * 8, static_cast<size_t>(m) * static_cast<size_t>(n) / 128);
            StorageBuffer buffer;
            buffer.reserve(4 + records * 32, "timeline");
            buffer.bind(kBinding);
            saturating_warm_up(0.3, [&] { filter.apply(fft->input(), fft->output()); });
            const unsigned zero = 0;
            buffer.write(&zero, sizeof zero);
            GpuTimer timer;
            timer.begin();
            for (int k = 0; k < queue; ++k) filter.apply(fft->input(), fft->output());
            timer.end();
            elapsed_ms = timer.milliseconds();
            buffer.read(&count, sizeof count);
            if (count > records) throw Error("timeline: " + std::to_string(count) + " workgroups, room for " + std::to_string(records));
            std::vector<unsigned> raw(1 + static_cast<size_t>(count) * 8);
            buffer.read(raw.data(), raw.size() * sizeof(unsigned));
            all.resize(count);
            for (unsigned i = 0; i < count; ++i) {
                const unsigned* r = &raw[1 + 8 * static_cast<size_t>(i)];
                all[i] = {r[0], r[1], r[2], r[3] | std::uint64_t(r[4]) << 32, r[5] | std::uint64_t(r[6]) << 32};
            }
            if (argc > 3) {
                FILE* csv = std::fopen(argv[3], "w");
                if (!csv) throw Error(std::string(argv[3]) + ": cannot write");
                std::fprintf(csv, "kind,sm,group,start,end\n");
                for (const Record& r : all)
                    std::fprintf(csv, "%s,%u,%u,%llu,%llu\n", kind_name(r.kind).c_str(), r.sm, r.group, static_cast<unsigned long long>(r.start),
                                 static_cast<unsigned long long>(r.end));
                std::fclose(csv);
            }
        }

        // Each multiprocessor's records in order of start, and its clock's ticks a microsecond
        // (its span against the queue's GPU time; the span is a little shorter).
        std::map<unsigned, std::vector<Record>> by_sm;
        for (const Record& r : all) by_sm[r.sm].push_back(r);
        std::vector<double> rates;
        for (auto& [sm, v] : by_sm) {
            std::sort(v.begin(), v.end(), [](const Record& a, const Record& b) { return a.start < b.start; });
            std::uint64_t first = v.front().start, last = 0;
            for (const Record& r : v) last = std::max(last, r.end);
            rates.push_back(static_cast<double>(last - first) / (elapsed_ms * 1000.0));
        }
        const double tick_us = 1.0 / median(rates);
        std::printf("timeline %s on %s: %d filters queued, %.4f ms a filter (%s), %u workgroups, %zu multiprocessors\n",
                    size.c_str(), gl.c_str(), queue, elapsed_ms / queue, csv_in ? "a multiprocessor's span" : "timer query", count,
                    by_sm.size());

        // Per kind: workgroups a filter, their duration.
        std::map<unsigned, std::vector<double>> durations;
        for (const Record& r : all) durations[r.kind].push_back(static_cast<double>(r.end - r.start) * tick_us);
        std::printf("\n%-34s %10s %9s %9s %9s\n", "dispatch", "groups/f", "med us", "p10 us", "p90 us");
        for (const auto& [kind, d] : durations)
            std::printf("%-34s %10.1f %9.2f %9.2f %9.2f\n", kind_name(kind).c_str(), static_cast<double>(d.size()) / queue, median(d),
                        quantile(d, 0.1), quantile(d, 0.9));

        // Per multiprocessor: busy (some workgroup resident) against its span, and each gap with
        // no workgroup resident, by the kind that ended last and the kind that starts it.
        std::map<std::pair<unsigned, unsigned>, double> gaps;
        std::map<unsigned, double> concurrency;   // kind: workgroup-us
        double busy_total = 0, span_total = 0;
        for (const auto& [sm, v] : by_sm) {
            std::uint64_t busy_until = v.front().start, first = v.front().start;
            unsigned last_kind = v.front().kind;
            double busy = 0;
            for (const Record& r : v) {
                concurrency[r.kind] += static_cast<double>(r.end - r.start) * tick_us;
                if (r.start > busy_until) {
                    gaps[{last_kind, r.kind}] += static_cast<double>(r.start - busy_until) * tick_us;
                } else if (r.end <= busy_until) {
                    continue;
                }
                busy += static_cast<double>(r.end - std::max(r.start, busy_until)) * tick_us;
                busy_until = r.end;
                last_kind = r.kind;
            }
            busy_total += busy;
            span_total += static_cast<double>(busy_until - first) * tick_us;
        }
        const double sms = static_cast<double>(by_sm.size());
        std::printf("\nmultiprocessors busy %.1f%% of their spans; idle %.2f us a filter each (span %.2f us a filter)\n",
                    100.0 * busy_total / span_total, (span_total - busy_total) / sms / queue, span_total / sms / queue);
        std::printf("%-34s %-34s %12s\n", "idle after", "until", "us/filter/SM");
        for (const auto& [pair, us] : gaps)
            if (us / sms / queue >= 0.05)
                std::printf("%-34s %-34s %12.2f\n", kind_name(pair.first).c_str(), kind_name(pair.second).c_str(), us / sms / queue);
        std::printf("\nresident workgroups, time-weighted a multiprocessor a filter (workgroup-us / SM / filter):\n");
        for (const auto& [kind, us] : concurrency) std::printf("%-34s %12.2f\n", kind_name(kind).c_str(), us / sms / queue);

        // One time line for every multiprocessor. GLSL on NVIDIA has no device-wide clock: each one's offset
        // comes from the filters themselves: a filter's first dispatch starts on every
        // multiprocessor within a microsecond or two (the barrier before it has drained the
        // GPU), so the k-th run of that dispatch's workgroups on each multiprocessor anchors
        // filter k there; the offset is the median over filters against the first multiprocessor.
        std::map<unsigned, int> first_kinds;
        for (const auto& [sm, v] : by_sm) ++first_kinds[v.front().kind];
        const unsigned first_kind = std::max_element(first_kinds.begin(), first_kinds.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
        std::map<unsigned, std::vector<double>> anchors;   // per SM, the start of each filter's first dispatch (us)
        std::vector<double> counts;
        for (const auto& [sm, v] : by_sm) {
            bool previous = false;
            std::vector<double> a;
            for (const Record& r : v) {
                const bool is_first = r.kind == first_kind;
                if (is_first && !previous) a.push_back(static_cast<double>(r.start) * tick_us);
                previous = is_first;
            }
            counts.push_back(static_cast<double>(a.size()));
            anchors[sm] = a;
        }
        // Multiprocessors that missed the first dispatch in some filter (fewer workgroups than
        // multiprocessors: 1024^2's 128) cannot be anchored, and stay out of the time line.
        const size_t filters = static_cast<size_t>(median(counts));
        for (auto it = anchors.begin(); it != anchors.end();) it = it->second.size() < filters ? anchors.erase(it) : std::next(it);
        if (anchors.size() < by_sm.size())
            std::printf("\n(%zu multiprocessors without a workgroup of the first dispatch in every filter are left out below)\n",
                        by_sm.size() - anchors.size());
        const std::vector<double> reference = anchors.begin()->second;
        std::map<unsigned, double> offset;
        std::vector<double> jitter;
        for (const auto& [sm, a] : anchors) {
            std::vector<double> d;
            for (size_t k = 0; k < filters; ++k) d.push_back(a[k] - reference[k]);
            offset[sm] = median(d);
            for (double x : d) jitter.push_back(std::abs(x - offset[sm]));
        }
        if (filters < 4) {
            std::printf("\n(%zu filters found on every multiprocessor: too few for one time line)\n", filters);
            return kExitOk;
        }
        std::printf("\none time line (clocks aligned on each filter's first dispatch: residual %.2f us median, %.2f p90); a filter's period "
                    "%.2f us\n", median(jitter), quantile(jitter, 0.9), (reference[filters - 1] - reference[1]) / static_cast<double>(filters - 2));
        // Each workgroup's filter: on its own multiprocessor, the last anchor at or before its start.
        struct Span { double start, end; unsigned kind; };
        std::vector<std::vector<Span>> in_filter(filters);
        for (const auto& [sm, v] : by_sm) {
            if (!anchors.count(sm)) continue;
            const std::vector<double>& own = anchors[sm];
            for (const Record& r : v) {
                const double a = static_cast<double>(r.start) * tick_us, b = static_cast<double>(r.end) * tick_us;
                const size_t f = static_cast<size_t>(std::upper_bound(own.begin(), own.begin() + static_cast<long>(filters), a) - own.begin());
                if (f >= 1 && f <= filters)
                    in_filter[f - 1].push_back({a - offset[sm] - reference[f - 1], b - offset[sm] - reference[f - 1], r.kind});
            }
        }
        std::map<unsigned, std::pair<std::vector<double>, std::vector<double>>> phase;
        for (size_t f = 1; f + 1 < filters; ++f) {
            std::map<unsigned, std::pair<double, double>> p;
            for (const Span& s : in_filter[f]) {
                auto it = p.find(s.kind);
                if (it == p.end()) p[s.kind] = {s.start, s.end};
                else it->second = {std::min(it->second.first, s.start), std::max(it->second.second, s.end)};
            }
            for (const auto& [kind, se] : p) {
                phase[kind].first.push_back(se.first);
                phase[kind].second.push_back(se.second);
            }
        }
        std::printf("%-34s %9s %9s   (us from the filter's first workgroup, medians over filters)\n", "dispatch", "first", "last end");
        std::vector<std::pair<double, unsigned>> order;
        for (const auto& [kind, se] : phase) order.push_back({median(se.first), kind});
        std::sort(order.begin(), order.end());
        for (const auto& [first, kind] : order) std::printf("%-34s %9.2f %9.2f\n", kind_name(kind).c_str(), first, median(phase[kind].second));
        // The middle filter's occupancy: workgroups resident, by kind, in bins of about a
        // hundredth of the period.
        const size_t mid = filters / 2;
        const double period = reference[mid + 1] - reference[mid];
        const double bin = period > 150 ? period / 100 : 1.0;
        const int bins = static_cast<int>(period / bin) + 1;
        std::vector<std::map<unsigned, double>> occupancy(static_cast<size_t>(bins));
        for (const Span& s : in_filter[mid])
            for (int b = std::max(0, static_cast<int>(s.start / bin)); b < std::min(bins, static_cast<int>(s.end / bin) + 1); ++b) {
                const double overlap = std::min(s.end, (b + 1) * bin) - std::max(s.start, b * bin);
                if (overlap > 0) occupancy[static_cast<size_t>(b)][s.kind] += overlap / bin;
            }
        std::printf("\nfilter %zu, workgroups resident by dispatch (bins of %.2f us):\n", mid, bin);
        for (int b = 0; b < bins; ++b) {
            std::printf("%8.1f ", b * bin);
            for (const auto& [kind, n] : occupancy[static_cast<size_t>(b)])
                if (n >= 0.5) std::printf(" %s:%.0f", kind_name(kind).c_str(), n);
            std::printf("\n");
        }
        return kExitOk;
    } catch (const std::exception& e) {
        return report("timeline", e.what(), kExitFailed);
    }
}
