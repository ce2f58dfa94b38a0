// A TCP dumbbell for the side-by-side validation of fairstream's TCP model
// against ns-3 (issue 18; `bench/ns3/run.py` builds and runs it, and writes
// docs/results/ns3-validation.md). It is the ns-3 twin of the scenario that
// `run.py` writes for `fairstream simulate`: N senders, each on its own
// access link to the left router, one bottleneck to the right router, and N
// receivers on their own access links. Flow i runs from sender i to
// receiver i and opens its connection at the i-th of `--starts`.
//
// Every ns-3 default that differs from fairstream's TCP model is set here
// to the model's value; bench/ns3/README.md lists them and what cannot be
// matched. Output: one JSON object on stdout.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t flows = 1;
    std::string tcp = "newreno"; // newreno | cubic
    bool sack = true;
    bool hystart = true; // CUBIC only: ns-3's HyStart (Ha & Rhee), not HyStart++
    std::string queue = "droptail"; // droptail | red
    std::string bottleneckRate = "10Mbps";
    std::string bottleneckDelay = "20ms";
    std::string accessRate = "1Gbps";
    std::string accessDelay = "1ms";
    uint32_t queuePackets = 100; // drop-tail capacity, or RED's hard limit
    double redMinTh = 10;
    double redMaxTh = 30;
    double redMaxP = 0.1;
    double redWeight = 0.002;
    uint32_t accessQueuePackets = 1000;
    uint32_t segmentSize = 1460;
    uint32_t initialCwnd = 3;
    uint32_t delAckCount = 1;
    double minRto = 1.0;
    double duration = 60.0;
    double startGap = 0.01;
    std::string starts; // comma-separated start times (seconds); overrides startGap
    uint32_t seed = 1;
    uint32_t overheadBytes = 2; // the PPP header PointToPointNetDevice adds
    std::string pcapPrefix; // to debug: pcap of sender 0's access link and the bottleneck

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of flows", flows);
    cmd.AddValue("tcp", "newreno or cubic", tcp);
    cmd.AddValue("sack", "SACK (RFC 2018) with RFC 6675 recovery", sack);
    cmd.AddValue("hystart", "CUBIC's HyStart", hystart);
    cmd.AddValue("queue", "droptail or red", queue);
    cmd.AddValue("bottleneckRate", "bottleneck rate", bottleneckRate);
    cmd.AddValue("bottleneckDelay", "bottleneck one-way delay", bottleneckDelay);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("accessDelay", "access link one-way delay", accessDelay);
    cmd.AddValue("queuePackets", "bottleneck queue (packets waiting, drop-tail or RED limit)",
                 queuePackets);
    cmd.AddValue("redMinTh", "RED min_th (packets, fairstream's)", redMinTh);
    cmd.AddValue("redMaxTh", "RED max_th (packets, fairstream's)", redMaxTh);
    cmd.AddValue("redMaxP", "RED max_p", redMaxP);
    cmd.AddValue("redWeight", "RED w_q", redWeight);
    cmd.AddValue("accessQueuePackets", "access link queues (packets)", accessQueuePackets);
    cmd.AddValue("segmentSize", "TCP MSS (bytes)", segmentSize);
    cmd.AddValue("initialCwnd", "initial window (segments)", initialCwnd);
    cmd.AddValue("delAckCount", "segments per ACK (1: no delayed ACKs)", delAckCount);
    cmd.AddValue("minRto", "minimum RTO (seconds)", minRto);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("startGap", "flow i starts at i * startGap seconds", startGap);
    cmd.AddValue("starts", "flow i starts at the i-th of these seconds (comma-separated)", starts);
    cmd.AddValue("seed", "RngRun", seed);
    cmd.AddValue("pcapPrefix", "write pcap files with this prefix (for debugging)", pcapPrefix);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // fairstream's TCP model (crates/sim/src/tcp.rs): MSS 1460, IW per RFC
    // 3390 (3 segments of 1460), ssthresh unbounded, min RTO 1 s, 1 ms
    // clock, no timestamps, no limited transmit, no PRR, a window never
    // limited by the receiver, never giving up on a segment.
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(UINT32_MAX));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 23));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 23));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    if (tcp == "newreno")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                           TypeIdValue(TcpNewReno::GetTypeId()));
    }
    else if (tcp == "cubic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
        // RFC 9438: beta 0.7, C 0.4, fast convergence, Reno-friendly region.
        Config::SetDefault("ns3::TcpCubic::Beta", DoubleValue(0.7));
        Config::SetDefault("ns3::TcpCubic::C", DoubleValue(0.4));
        Config::SetDefault("ns3::TcpCubic::FastConvergence", BooleanValue(true));
        Config::SetDefault("ns3::TcpCubic::TcpFriendliness", BooleanValue(true));
        Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));
    }
    else
    {
        NS_ABORT_MSG("--tcp must be newreno or cubic");
    }

    NodeContainer senders;
    NodeContainer receivers;
    NodeContainer routers;
    senders.Create(flows);
    receivers.Create(flows);
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, accessQueuePackets)));

    // A fairstream link holds one packet in service beside `queuePackets`
    // waiting. An ns-3 device holds one in transmission beside its device
    // queue, and without a queue disc a packet that finds the device queue
    // full (stopped) is dropped by the traffic-control layer, out of the
    // queue's counts. So the bottleneck runs a queue disc in front of a
    // one-packet device queue: queuePackets - 1 in the disc, one in the
    // device queue, one in transmission, the disc's counters for the drops.
    bool red = queue == "red";
    NS_ABORT_MSG_IF(!red && queue != "droptail", "--queue must be droptail or red");
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(bottleneckRate));
    bottleneck.SetChannelAttribute("Delay", StringValue(bottleneckDelay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1)));

    Ipv4AddressHelper address;
    address.SetBase("10.1.0.0", "255.255.255.252");
    TrafficControlHelper none;
    std::vector<Ipv4Address> receiverAddresses;
    for (uint32_t i = 0; i < flows; ++i)
    {
        NetDeviceContainer left = access.Install(senders.Get(i), routers.Get(0));
        address.Assign(left);
        none.Uninstall(left);
        address.NewNetwork();
        NetDeviceContainer right = access.Install(routers.Get(1), receivers.Get(i));
        Ipv4InterfaceContainer interfaces = address.Assign(right);
        none.Uninstall(right);
        address.NewNetwork();
        receiverAddresses.push_back(interfaces.GetAddress(1));
    }
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));
    QueueSizeValue discLimit(QueueSize(QueueSizeUnit::PACKETS, queuePackets - 1));
    TrafficControlHelper tch;
    if (red)
    {
        // fairstream's RED (crates/sim/src/queue/red.rs): packet mode, gentle,
        // p_a = p_b / (1 - count p_b) (ns-3's Wait = false), the idle-time
        // decay with s = (1500 + overhead) bytes at the link's rate. Its
        // average is over all the packets waiting; ns-3's disc sees one
        // fewer (the device queue holds it), so the thresholds move down by
        // one packet.
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MinTh",
                             DoubleValue(redMinTh - 1),
                             "MaxTh",
                             DoubleValue(redMaxTh - 1),
                             "LInterm",
                             DoubleValue(1.0 / redMaxP),
                             "QW",
                             DoubleValue(redWeight),
                             "Gentle",
                             BooleanValue(true),
                             "Wait",
                             BooleanValue(false),
                             "UseHardDrop",
                             BooleanValue(true),
                             "MeanPktSize",
                             UintegerValue(1500 + overheadBytes),
                             "LinkBandwidth",
                             DataRateValue(DataRate(bottleneckRate)),
                             "LinkDelay",
                             TimeValue(Time(bottleneckDelay)),
                             "MaxSize",
                             discLimit);
    }
    else
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", discLimit);
    }
    QueueDiscContainer qdiscs = tch.Install(core);
    address.Assign(core);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5000;
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<double> startTimes;
    std::stringstream startList(starts);
    for (std::string item; std::getline(startList, item, ',');)
    {
        startTimes.push_back(std::stod(item));
    }
    NS_ABORT_MSG_IF(!startTimes.empty() && startTimes.size() != flows,
                    "--starts needs one time per flow");
    for (uint32_t i = 0; i < flows; ++i)
    {
        if (startTimes.size() < flows)
        {
            startTimes.push_back(i * startGap);
        }
        double start = startTimes[i];
        BulkSendHelper source("ns3::TcpSocketFactory",
                              InetSocketAddress(receiverAddresses[i], port));
        source.SetAttribute("MaxBytes", UintegerValue(0));
        source.SetAttribute("SendSize", UintegerValue(segmentSize));
        ApplicationContainer app = source.Install(senders.Get(i));
        app.Start(Seconds(start));
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sink.Install(receivers.Get(i));
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));
    }

    if (!pcapPrefix.empty())
    {
        access.EnablePcap(pcapPrefix + "-access", senders.Get(0)->GetDevice(1), true);
        bottleneck.EnablePcap(pcapPrefix + "-bottleneck", core.Get(0), true);
    }

    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    auto forward = DynamicCast<PointToPointNetDevice>(core.Get(0));
    uint64_t deviceDrops = forward->GetQueue()->GetTotalDroppedPackets();
    uint64_t qdiscDrops = qdiscs.Get(0)->GetStats().nTotalDroppedPackets;
    uint64_t sent = forward->GetQueue()->GetTotalReceivedPackets();

    std::printf("{\"duration_s\": %.9g, \"bottleneck_drops\": %llu, "
                "\"device_drops\": %llu, \"qdisc_drops\": %llu, \"bottleneck_packets\": %llu, "
                "\"flows\": [",
                duration,
                static_cast<unsigned long long>(deviceDrops + qdiscDrops),
                static_cast<unsigned long long>(deviceDrops),
                static_cast<unsigned long long>(qdiscDrops),
                static_cast<unsigned long long>(sent));
    for (uint32_t i = 0; i < flows; ++i)
    {
        std::printf("%s{\"start_s\": %.9g, \"bytes_received\": %llu}",
                    i ? ", " : "",
                    startTimes[i],
                    static_cast<unsigned long long>(sinks[i]->GetTotalRx()));
    }
    std::printf("]}\n");
    Simulator::Destroy();
    return 0;
}
