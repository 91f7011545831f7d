// Package kafkaio is distfeat's Kafka edge for the client commands and the worker's
// connections: with consumer (the worker's consumer group), the only package that imports
// kafka-go (the test brokers in internal/ aside). It holds
//
//   - the clients' dialer and transport built from the configuration's TLS/SASL settings
//     (Clients, NewCluster) and connection failures named by layer (Probe, Authorization,
//     Error; Cluster.Explain);
//   - publishing point batches (PointWriter, Split, NewBalancer, Publish);
//   - reading topics without a consumer group (Cluster.Partitions, ConsumeFeatures for
//     `distfeat tail`, ReadFromStart for `calibrate --from-topic`).
package kafkaio
