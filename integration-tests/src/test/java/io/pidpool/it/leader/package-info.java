/**
 * The leader a scenario runs against, behind {@link io.pidpool.it.leader.LeaderUnderTest}: for now
 * {@link io.pidpool.it.leader.FakeLeaderUnderTest} (the SDK's FakeLeader plus a minimal assignment
 * policy); the real pid-server plugs in later.
 */
package io.pidpool.it.leader;
