package groundchat.opensearch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;

/**
 * One OpenSearch node in this JVM, bound to loopback, with the modules a distribution ships and the
 * k-NN plugin loaded from the classpath.
 *
 * <p>Usage: {@code LocalNode HOME HTTP_PORT}. Data and logs go under HOME. When the node serves,
 * it writes HOME/ready (the HTTP port) so the launcher needs no log parsing; it stops on SIGTERM.
 * The system property {@code groundchat.extraPlugins} names more plugin classes (comma-separated),
 * for a measurement that needs a plugin the served search does not, its jars on the classpath.
 */
public final class LocalNode {

    /** Plugins by class name: k-NN's jar is unpacked from its zip, so it is not a compile dependency. */
    private static final List<String> PLUGINS = List.of(
            "org.opensearch.transport.Netty4Plugin",
            "org.opensearch.analysis.common.CommonAnalysisPlugin",
            "org.opensearch.painless.PainlessPlugin",
            // _delete_by_query and _update_by_query (the recall index's deletion, sweep and renewal).
            "org.opensearch.index.reindex.ReindexPlugin",
            "org.opensearch.knn.plugin.KNNPlugin");

    /** Node's constructor that takes classpath plugins is protected: this is the only reason for it. */
    private static final class PluginNode extends Node {
        PluginNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    private LocalNode() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: LocalNode HOME HTTP_PORT");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        String port = args[1];
        Files.createDirectories(home.resolve("config"));
        Files.deleteIfExists(home.resolve("ready"));

        Settings settings = Settings.builder()
                .put("path.home", home.toString())
                .put("path.data", home.resolve("data").toString())
                .put("path.logs", home.resolve("logs").toString())
                .put("cluster.name", "groundchat-local")
                .put("node.name", "groundchat-local")
                .put("discovery.type", "single-node")
                // Loopback only: nothing on this machine's other interfaces can reach it.
                .put("network.host", "127.0.0.1")
                .put("http.port", port)
                .put("transport.port", "0")
                .put("action.auto_create_index", "false")
                .build();
        LogConfigurator.configureWithoutConfig(settings);
        Environment environment = InternalSettingsPreparer.prepareEnvironment(
                settings, Map.of(), home.resolve("config"), () -> "groundchat-local");

        List<Class<? extends Plugin>> plugins = new ArrayList<>();
        List<String> names = new ArrayList<>(PLUGINS);
        for (String extra : System.getProperty("groundchat.extraPlugins", "").split(",")) {
            if (!extra.isBlank()) {
                names.add(extra.strip());
            }
        }
        for (String name : names) {
            plugins.add(Class.forName(name).asSubclass(Plugin.class));
        }
        Node node = new PluginNode(environment, plugins);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (IOException | InterruptedException e) {
                System.err.println("groundchat-local: stopping failed: " + e);
            } finally {
                stopped.countDown();
            }
        }, "groundchat-local-stop"));
        node.start();
        // Written whole, then renamed, so a reader never sees half a file.
        Path partial = home.resolve("ready.partial");
        Files.writeString(partial, port, StandardCharsets.UTF_8);
        Files.move(partial, home.resolve("ready"), StandardCopyOption.ATOMIC_MOVE);
        System.out.println("groundchat-local: serving on 127.0.0.1:" + port);
        stopped.await();
    }
}
